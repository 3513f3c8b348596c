package postgres

// LockKey exposes the advisory-lock key of a name to the tests, which watch
// pg_locks for a waiter.
var LockKey = lockKey
