// SQLite's result codes by name, as sqlite3.h spells them: the code a DataError carries on every
// runtime. Bun's driver names the code itself; node:sqlite (Node and Deno) gives the number
// (`errcode`) and ERR_SQLITE_ERROR for every failure, which would tell nothing apart.

// The primary codes, by number.
const PRIMARY: Record<number, string> = {
  1: "ERROR",
  2: "INTERNAL",
  3: "PERM",
  4: "ABORT",
  5: "BUSY",
  6: "LOCKED",
  7: "NOMEM",
  8: "READONLY",
  9: "INTERRUPT",
  10: "IOERR",
  11: "CORRUPT",
  12: "NOTFOUND",
  13: "FULL",
  14: "CANTOPEN",
  15: "PROTOCOL",
  16: "EMPTY",
  17: "SCHEMA",
  18: "TOOBIG",
  19: "CONSTRAINT",
  20: "MISMATCH",
  21: "MISUSE",
  22: "NOLFS",
  23: "AUTH",
  24: "FORMAT",
  25: "RANGE",
  26: "NOTADB",
  27: "NOTICE",
  28: "WARNING",
};

// The extended codes of each primary code: the name of extended code `primary | (n << 8)` is
// the n-th (from 1) of its list.
const EXTENDED: Record<number, readonly string[]> = {
  1: ["MISSING_COLLSEQ", "RETRY", "SNAPSHOT"],
  // SQLITE_ABORT_ROLLBACK is ABORT | (2 << 8): sqlite3.h has no first one.
  4: ["", "ROLLBACK"],
  5: ["RECOVERY", "SNAPSHOT", "TIMEOUT"],
  6: ["SHAREDCACHE", "VTAB"],
  8: ["RECOVERY", "CANTLOCK", "ROLLBACK", "DBMOVED", "CANTINIT", "DIRECTORY"],
  10: [
    "READ",
    "SHORT_READ",
    "WRITE",
    "FSYNC",
    "DIR_FSYNC",
    "TRUNCATE",
    "FSTAT",
    "UNLOCK",
    "RDLOCK",
    "DELETE",
    "BLOCKED",
    "NOMEM",
    "ACCESS",
    "CHECKRESERVEDLOCK",
    "LOCK",
    "CLOSE",
    "DIR_CLOSE",
    "SHMOPEN",
    "SHMSIZE",
    "SHMLOCK",
    "SHMMAP",
    "SEEK",
    "DELETE_NOENT",
    "MMAP",
    "GETTEMPPATH",
    "CONVPATH",
    "VNODE",
    "AUTH",
    "BEGIN_ATOMIC",
    "COMMIT_ATOMIC",
    "ROLLBACK_ATOMIC",
    "DATA",
    "CORRUPTFS",
  ],
  11: ["VTAB", "SEQUENCE", "INDEX"],
  14: ["NOTEMPDIR", "ISDIR", "FULLPATH", "CONVPATH", "DIRTYWAL", "SYMLINK"],
  19: [
    "CHECK",
    "COMMITHOOK",
    "FOREIGNKEY",
    "FUNCTION",
    "NOTNULL",
    "PRIMARYKEY",
    "TRIGGER",
    "UNIQUE",
    "VTAB",
    "ROWID",
    "PINNED",
    "DATATYPE",
  ],
  23: ["USER"],
  27: ["RECOVER_WAL", "RECOVER_ROLLBACK", "RBU"],
  28: ["AUTOINDEX"],
};

/**
 * The name of SQLite's result code `code` (`2067` is `SQLITE_CONSTRAINT_UNIQUE`); for an extended
 * code this table does not know, its primary code's name; `undefined` for no error code.
 */
export function sqliteCodeName(code: number): string | undefined {
  if (!Number.isInteger(code) || code <= 0) return undefined;
  const primary = PRIMARY[code & 0xff];
  if (primary === undefined) return undefined;
  const extended = code >> 8 === 0 ? undefined : EXTENDED[code & 0xff]?.[(code >> 8) - 1];
  return `SQLITE_${primary}${extended ? `_${extended}` : ""}`;
}
