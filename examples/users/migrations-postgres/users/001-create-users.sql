-- The users of the sample app on PostgreSQL: migrations/users/001-create-users.sql's table in
-- PostgreSQL's words. An identity column never hands out an id twice, as SQLite's AUTOINCREMENT
-- does not; emails are unique: the index decides a taken one.
CREATE TABLE users (
  id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name TEXT NOT NULL,
  email TEXT NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (email);
