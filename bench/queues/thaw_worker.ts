// The Thaw side of bench/jobs_workerd.ts: jobs on Cloudflare Queues, a no-op `@JobHandler("work")`
// running 10 at a time, and `POST /enqueue/{n}` enqueueing n jobs in turn.
import {
  Autowired,
  bootstrap,
  GetMapping,
  PathVariable,
  PostMapping,
  RestController,
  Service,
} from "../../mod.ts";
import { JobHandler, JobQueue, jobs } from "../../jobs.ts";

let ran = 0;

@Service()
class Work {
  @JobHandler("work", { concurrency: 10 })
  run(): void {
    ran++;
  }
}

@RestController()
class Bench {
  @Autowired(JobQueue)
  queue!: JobQueue;

  @PostMapping("/enqueue/{n}", PathVariable("n", Number))
  async enqueue(n: number): Promise<{ sent: number }> {
    for (let i = 0; i < n; i++) await this.queue.enqueue("work", { n: i });
    return { sent: n };
  }

  @GetMapping("/ran")
  ran(): { ran: number } {
    return { ran };
  }
}

export default await bootstrap({
  controllers: [Bench],
  components: [Work],
  config: { jobs: { store: "cloudflare", cloudflare: { bindings: { work: "Q" } } } },
  jobs: jobs(),
});
