-- The users of the sample app (examples/users). Emails are unique: the index decides a taken one.
CREATE TABLE users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  email TEXT NOT NULL
);
CREATE UNIQUE INDEX users_email ON users (email);
