// NestJS, the equivalent controller of the HTTP benchmark, on express or on fastify:
//   node --import tsx bench/nest/main.ts express|fastify <port>   (prints `ready`)
// Nest's decorators are TypeScript's legacy ones, so tsx compiles this file with this folder's
// tsconfig.json (experimentalDecorators); bench/run.sh sets TSX_TSCONFIG_PATH.
import "reflect-metadata";
import process from "node:process";
import { Body, Controller, Get, HttpCode, Module, Param, ParseIntPipe, Post } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { ExpressAdapter } from "@nestjs/platform-express";
import { FastifyAdapter } from "@nestjs/platform-fastify";
import { user } from "../http/users.ts";

@Controller("users")
class UserController {
  @Get(":id")
  get(@Param("id", ParseIntPipe) id: number) {
    return user(id);
  }

  // 200 like the other servers (Nest answers a POST with 201 by default).
  @Post()
  @HttpCode(200)
  create(@Body() body: Record<string, unknown>) {
    return { ...body, id: 1 };
  }
}

@Module({ controllers: [UserController] })
class AppModule {}

const [platform, portText] = process.argv.slice(2);
if (platform !== "express" && platform !== "fastify") {
  console.error("usage: main.ts express|fastify <port>");
  process.exit(2);
}
const adapter = platform === "express" ? new ExpressAdapter() : new FastifyAdapter();
const app = await NestFactory.create(AppModule, adapter, { logger: false });
await app.listen(Number(portText), "127.0.0.1");
console.log("ready");
