-- Portable SQL: the same file runs on SQLite, PostgreSQL and MariaDB/MySQL.
CREATE TABLE users (
  id INTEGER PRIMARY KEY,
  name VARCHAR(100) NOT NULL,
  email VARCHAR(200) NOT NULL UNIQUE
);

INSERT INTO users (id, name, email) VALUES (1, 'Ada Lovelace', 'ada@example.com');
