package cairn

// Audit types of `cairn exec` (ARCHITECTURE §11.6): one row when a command
// is about to start, one when it ended. Their metadata names argv[0] only,
// never the rest of the argv, which may hold secrets.
const (
	AuditExecStarted AuditType = "EXEC_STARTED"
	AuditExecEnded   AuditType = "EXEC_ENDED"
)
