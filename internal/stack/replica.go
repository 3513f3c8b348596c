package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// standbyName is the standby's cluster_name, which its WAL receiver gives
// the primary as its application name, and which the primary's
// synchronous_standby_names lists.
const standbyName = "cairn_standby"

// Replicated is a primary and a hot standby streaming its WAL, started by
// StartReplicated.
//
// The standby is synchronous (synchronous_commit stays on and the primary's
// synchronous_standby_names names it): a commit is acknowledged only once
// the standby has flushed its WAL, so a standby promoted after the primary
// died holds every acknowledged write. The price is that while the standby
// is down, commits on the primary wait for it. A promoted standby names no
// standby of its own: it takes writes alone.
type Replicated struct {
	Primary *Postgres
	Standby *Postgres
}

// StartReplicated starts a primary in primaryDir as StartPostgres does, and
// a standby in standbyDir, first copied from the primary with
// `pg_basebackup -R` if standbyDir holds no cluster yet. Both listen on
// loopback, each on its own port, with the primary's superuser and
// password; initdb's pg_hba already lets that user replicate over
// loopback. It returns once the standby streams synchronously. A standby
// dir whose cluster was promoted is refused: it is a primary now, and
// starting the old one beside it would give two.
func StartReplicated(ctx context.Context, primaryDir, standbyDir string, log io.Writer, opts ...PostgresOption) (*Replicated, error) {
	data := filepath.Join(standbyDir, pgDataDir)
	if fileExists(filepath.Join(data, "PG_VERSION")) && !fileExists(filepath.Join(data, "standby.signal")) {
		return nil, fmt.Errorf("start standby: the cluster in %s was promoted and is a primary now; remove it to make a new standby", data)
	}
	primary, err := StartPostgres(ctx, primaryDir, log, append(opts, func(c *postgresConfig) { c.syncStandby = standbyName })...)
	if err != nil {
		return nil, err
	}
	standby, err := startStandby(ctx, primary, standbyDir, log, opts)
	if err == nil {
		err = primary.waitSynchronous(ctx)
	}
	if err != nil {
		if standby != nil {
			standby.Stop()
		}
		primary.Stop()
		return nil, err
	}
	return &Replicated{Primary: primary, Standby: standby}, nil
}

// startStandby copies the primary into dir unless dir holds its standby
// already, and starts it.
func startStandby(ctx context.Context, primary *Postgres, dir string, log io.Writer, opts []PostgresOption) (*Postgres, error) {
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	if err := preparePostgresDir(dir, cred); err != nil {
		return nil, err
	}
	if data := filepath.Join(dir, pgDataDir); !fileExists(filepath.Join(data, "PG_VERSION")) {
		if err := baseBackup(ctx, primary, data, cred, log); err != nil {
			return nil, err
		}
	}
	// The copy has the primary's users and passwords.
	if err := os.WriteFile(filepath.Join(dir, pgPassFile), []byte(primary.Password+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("start standby: %w", err)
	}
	return StartPostgres(ctx, dir, log, append(opts, func(c *postgresConfig) { c.name = standbyName })...)
}

// baseBackup copies the primary's cluster into data with pg_basebackup -R,
// which also makes it a standby of the primary (standby.signal, and
// primary_conninfo in postgresql.auto.conf).
func baseBackup(ctx context.Context, primary *Postgres, data string, cred *syscall.Credential, log io.Writer) error {
	bin, err := postgresBinDir()
	if err != nil {
		return err
	}
	err = fillDataDir(ctx, data, cred, log, func(scratch string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "pg_basebackup"),
			"-D", scratch, "-R", "-X", "stream", "--checkpoint=fast", "-w",
			"-h", primary.Host, "-p", strconv.Itoa(primary.Port), "-U", primary.User)
		cmd.Dir = filepath.Dir(data)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+primary.Password)
		return cmd
	})
	if err != nil {
		return fmt.Errorf("copy the primary: %w", err)
	}
	return nil
}

// waitSynchronous waits until the standby streams from pg, synchronously.
func (pg *Postgres) waitSynchronous(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgStartWait)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("wait for the standby: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for {
		var state string
		err := conn.QueryRow(ctx, `SELECT sync_state FROM pg_stat_replication WHERE application_name = $1`,
			standbyName).Scan(&state)
		if err == nil && state == "sync" {
			return nil
		}
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("wait for the standby: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the standby to stream synchronously: %w (state %q)", ctx.Err(), state)
		case <-time.After(50 * time.Millisecond): // the primary announces nothing
		}
	}
}

// Promote ends a standby's recovery: it replays the WAL it has received,
// then takes writes. It returns once it does (pg_promote waits).
func (pg *Postgres) Promote(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var promoted bool
	if err := conn.QueryRow(ctx, "SELECT pg_promote(wait => true, wait_seconds => 60)").Scan(&promoted); err != nil {
		return fmt.Errorf("promote: %w", err)
	}
	if !promoted {
		return errors.New("promote: the standby was not promoted within 60 s")
	}
	return nil
}

// Hosts are the pair's addresses, host:port, the primary first.
func (r *Replicated) Hosts() []string {
	return []string{
		net.JoinHostPort(r.Primary.Host, strconv.Itoa(r.Primary.Port)),
		net.JoinHostPort(r.Standby.Host, strconv.Itoa(r.Standby.Port)),
	}
}

// DSN returns a URL naming both servers that connects to database on
// whichever of them takes writes (target_session_attrs=read-write): the
// primary, or the standby once it is promoted.
func (r *Replicated) DSN(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(r.Primary.User, r.Primary.Password),
		Host:     strings.Join(r.Hosts(), ","),
		Path:     "/" + database,
		RawQuery: "sslmode=disable&target_session_attrs=read-write",
	}
	return u.String()
}

// Stop stops the primary, then the standby, and returns the first error.
func (r *Replicated) Stop() error {
	return errors.Join(r.Primary.Stop(), r.Standby.Stop())
}
