-- How a shell ended is its SHELL_CLOSED audit row; an attach to a shell
-- that has ended looks it up by the shell's ID, so that the refusal can say
-- why (its node lost, its lifetime reached, …).
CREATE INDEX IF NOT EXISTS audit_shell_closed_idx ON audit_system_events ((metadata ->> 'shell_id'))
    WHERE type = 'SHELL_CLOSED';
