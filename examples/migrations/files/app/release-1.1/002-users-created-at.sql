ALTER TABLE users ADD COLUMN created_at VARCHAR(30);
CREATE INDEX users_name ON users (name);
