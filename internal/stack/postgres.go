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
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a private PostgreSQL cluster started by StartPostgres, reached
// over loopback TCP as its superuser.
type Postgres struct {
	Host     string // always 127.0.0.1
	Port     int
	User     string // the superuser, "cairn"
	Password string
	Database string // "cairn", created if absent
	Dir      string // the directory holding the cluster, password and port

	proc *process
}

// PostgresOption changes how StartPostgres runs the server.
type PostgresOption func(*postgresConfig)

type postgresConfig struct {
	fsync bool
	// syncStandby is the application name of the standby whose flush
	// every commit waits for (synchronous_standby_names); "" for none.
	syncStandby string
	// name is cluster_name, which a standby's WAL receiver also gives the
	// primary as its application name.
	name string
}

// WithoutFsync runs the server with fsync, full-page writes and (unless it
// has a synchronous standby) synchronous commit off: fast, and unsafe
// against a machine crash, though not against a killed server, whose
// writes the kernel still holds. For tests.
func WithoutFsync() PostgresOption {
	return func(c *postgresConfig) { c.fsync = false }
}

const (
	pgUser      = "cairn"
	pgDatabase  = "cairn"
	pgDataDir   = "pgdata"      // the cluster, owned by postgres
	pgPassFile  = "pg-password" // the superuser's password, 0600
	pgPortFile  = "pg-port"
	pgStartWait = 60 * time.Second
)

// StartPostgres starts a private cluster in dir, running initdb first if dir
// does not hold one yet, so a restart in the same dir keeps its data, its
// password and, if it is still free, its port. It returns once the server
// accepts connections and database "cairn" exists.
//
// The server runs as the OS user postgres (initdb refuses root), so the
// process must run as root, and dir's parents must be traversable by postgres;
// dir itself is created 0755 or made traversable. A t.TempDir() is not: its
// parent is 0700. The server's output goes to log (nil means discard), and it
// is killed if the calling process dies.
func StartPostgres(ctx context.Context, dir string, log io.Writer, opts ...PostgresOption) (*Postgres, error) {
	cfg := postgresConfig{fsync: true}
	for _, o := range opts {
		o(&cfg)
	}
	bin, err := postgresBinDir()
	if err != nil {
		return nil, err
	}
	cred, err := postgresCredential()
	if err != nil {
		return nil, err
	}
	if err := preparePostgresDir(dir, cred); err != nil {
		return nil, err
	}
	password, err := readOrCreateSecret(filepath.Join(dir, pgPassFile), 24)
	if err != nil {
		return nil, fmt.Errorf("postgres password: %w", err)
	}
	if err := initCluster(ctx, bin, dir, password, cred, log); err != nil {
		return nil, err
	}
	port, err := choosePort(filepath.Join(dir, pgPortFile))
	if err != nil {
		return nil, fmt.Errorf("postgres port: %w", err)
	}
	pg := &Postgres{Host: "127.0.0.1", Port: port, User: pgUser, Password: password, Database: pgDatabase, Dir: dir}
	if err := pg.start(ctx, bin, cfg, cred, log); err != nil {
		return nil, err
	}
	return pg, nil
}

// start runs the server, waits for it and makes sure database cairn exists.
func (pg *Postgres) start(ctx context.Context, bin string, cfg postgresConfig, cred *syscall.Credential, log io.Writer) error {
	data := filepath.Join(pg.Dir, pgDataDir)
	args := []string{
		"-D", data,
		"-p", strconv.Itoa(pg.Port),
		"-c", "listen_addresses=" + pg.Host,
		"-c", "unix_socket_directories=" + data, // only postgres and root can reach it
		"-c", "max_connections=200", // parallel test packages each hold a pool
	}
	if cfg.name != "" {
		args = append(args, "-c", "cluster_name="+cfg.name)
	}
	if cfg.syncStandby != "" {
		// Replication (wal_level and WAL senders) is on by default; naming
		// the standby makes it synchronous.
		args = append(args, "-c", "wal_level=replica", "-c", "max_wal_senders=4",
			"-c", "synchronous_standby_names="+cfg.syncStandby)
	}
	if !cfg.fsync {
		args = append(args, "-c", "fsync=off", "-c", "full_page_writes=off")
		if cfg.syncStandby == "" {
			// With a synchronous standby, commits keep waiting for it: what
			// an acknowledgement promises is the point of having one.
			args = append(args, "-c", "synchronous_commit=off")
		}
	}
	// The server outlives this call: Stop ends it, not ctx.
	cmd := exec.CommandContext(context.WithoutCancel(ctx), filepath.Join(bin, "postgres"), args...)
	cmd.Dir = pg.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	proc, err := startProcess("postgres", cmd, log)
	if err != nil {
		return err
	}
	pg.proc = proc
	if err := pg.waitReady(ctx); err != nil {
		proc.kill()
		return err
	}
	return nil
}

// waitReady connects until the server answers, then creates database cairn if
// it is absent.
func (pg *Postgres) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pgStartWait)
	defer cancel()
	for {
		attempt, cancelAttempt := context.WithTimeout(ctx, 2*time.Second)
		conn, err := pgx.Connect(attempt, pg.DSN("postgres"))
		cancelAttempt()
		if err == nil {
			defer conn.Close(context.WithoutCancel(ctx))
			return ensureDatabase(ctx, conn, pg.Database)
		}
		select {
		case <-pg.proc.done:
			return pg.proc.exitError()
		case <-ctx.Done():
			return fmt.Errorf("wait for postgres on port %d: %w (last error: %v)", pg.Port, ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// DSN returns a URL that connects to database on this server over loopback
// TCP as the superuser.
func (pg *Postgres) DSN(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(pg.User, pg.Password),
		Host:     net.JoinHostPort(pg.Host, strconv.Itoa(pg.Port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Stop shuts the server down (fast shutdown: SIGINT) and waits for it,
// killing it after 10 s. It is idempotent; it returns an error only if the
// server had to be killed.
func (pg *Postgres) Stop() error {
	if pg.proc == nil {
		return nil
	}
	return pg.proc.stop(syscall.SIGINT, stopGrace)
}

// Kill ends the server with SIGKILL, as a crash or the OOM killer would,
// and waits for it. Its backends notice and drop their clients. Stop is a
// no-op afterwards.
func (pg *Postgres) Kill() {
	if pg.proc != nil {
		pg.proc.kill()
	}
}

// CreateDatabase creates database name as a copy of template ("" means the
// server's default, template1). The template must have no open connections.
// It fails if name exists.
func (pg *Postgres) CreateDatabase(ctx context.Context, name, template string) error {
	sql := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		sql += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if err := pg.exec(ctx, sql); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// DropDatabase drops database name, closing its connections first. It is
// idempotent.
func (pg *Postgres) DropDatabase(ctx context.Context, name string) error {
	if err := pg.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

// exec runs one statement in the maintenance database.
func (pg *Postgres) exec(ctx context.Context, sql string) error {
	conn, err := pgx.Connect(ctx, pg.DSN("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

func ensureDatabase(ctx context.Context, conn *pgx.Conn, name string) error {
	var exists bool
	err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err != nil {
		return fmt.Errorf("look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	// A primary started for a standby that does not exist yet would wait
	// for it forever: this one commit needs only the local disk.
	if _, err := conn.Exec(ctx, "SET synchronous_commit TO local"); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return fmt.Errorf("create database %s: %w", name, err)
	}
	return nil
}

// initCluster runs initdb unless dir already holds a cluster. initdb writes
// into a scratch directory renamed into place when it succeeds, so an
// interrupted run never leaves a half-made cluster behind.
func initCluster(ctx context.Context, bin, dir, password string, cred *syscall.Credential, log io.Writer) error {
	data := filepath.Join(dir, pgDataDir)
	if fileExists(filepath.Join(data, "PG_VERSION")) {
		return nil
	}
	if fileExists(data) {
		return fmt.Errorf("init postgres cluster: %s exists but holds no cluster; remove it", data)
	}
	pwfile := filepath.Join(dir, pgPassFile+".init")
	defer os.Remove(pwfile)
	if err := writeOwned(pwfile, password, cred); err != nil {
		return fmt.Errorf("init postgres cluster: %w", err)
	}
	err := fillDataDir(ctx, data, cred, log, func(scratch string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
			"-D", scratch, "-U", pgUser, "--pwfile="+pwfile, "--auth=scram-sha-256",
			"-E", "UTF8", "--no-locale", "-N", "--no-instructions")
		cmd.Dir = dir
		return cmd
	})
	if err != nil {
		return fmt.Errorf("init postgres cluster: %w", err)
	}
	return nil
}

// fillDataDir runs the command made by fill (initdb, pg_basebackup) as the
// postgres user into a scratch directory beside data, renamed into place
// when it succeeds, so an interrupted run never leaves a half-made cluster
// behind. data's parent is root's; postgres gets only the directory it
// writes into.
func fillDataDir(ctx context.Context, data string, cred *syscall.Credential, log io.Writer, fill func(scratch string) *exec.Cmd) error {
	scratch := data + ".init"
	if err := os.RemoveAll(scratch); err != nil {
		return err
	}
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return err
	}
	if err := os.Chown(scratch, int(cred.Uid), int(cred.Gid)); err != nil {
		return err
	}
	cmd := fill(scratch)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	name := filepath.Base(cmd.Path)
	proc, err := startProcess(name, cmd, log)
	if err != nil {
		return err
	}
	<-proc.done
	if proc.err != nil {
		return proc.exitError()
	}
	return os.Rename(scratch, data)
}

// writeOwned writes a 0600 file that the user of cred owns.
func writeOwned(path, content string, cred *syscall.Credential) error {
	if err := os.WriteFile(path, []byte(content+"\n"), 0o600); err != nil {
		return err
	}
	return os.Chown(path, int(cred.Uid), int(cred.Gid))
}

// preparePostgresDir creates dir (0755), makes sure the postgres user can
// traverse it and each of its parents.
func preparePostgresDir(dir string, cred *syscall.Credential) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("postgres dir: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("postgres dir: %w", err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return fmt.Errorf("postgres dir: %w", err)
	}
	if !canTraverse(fi, cred) {
		if err := os.Chmod(abs, fi.Mode().Perm()|0o011); err != nil {
			return fmt.Errorf("postgres dir: let postgres traverse %s: %w", abs, err)
		}
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("postgres dir: %w", err)
		}
		if !canTraverse(fi, cred) {
			return fmt.Errorf("postgres dir: user postgres cannot traverse %s (mode %v); use a dir whose parents are 0755", p, fi.Mode().Perm())
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// canTraverse reports whether the user of cred may search directory fi.
func canTraverse(fi os.FileInfo, cred *syscall.Credential) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true // not a unix file system; let postgres find out
	}
	mode := fi.Mode().Perm()
	switch {
	case st.Uid == cred.Uid:
		return mode&0o100 != 0
	case st.Gid == cred.Gid:
		return mode&0o010 != 0
	default:
		return mode&0o001 != 0
	}
}

// postgresCredential looks up the OS user the server runs as.
func postgresCredential() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("look up user postgres (install Debian's postgresql with `make deps`): %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("look up user postgres: uid %q: %w", u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("look up user postgres: gid %q: %w", u.Gid, err)
	}
	if os.Geteuid() != 0 {
		return nil, errors.New("start postgres: must run as root to run the server as user postgres")
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// postgresBinDir finds PostgreSQL's server binaries: $CAIRN_POSTGRES_BIN,
// then Debian's PostgreSQL 15, then initdb on PATH.
func postgresBinDir() (string, error) {
	if d := os.Getenv("CAIRN_POSTGRES_BIN"); d != "" {
		if !fileExists(filepath.Join(d, "initdb")) {
			return "", fmt.Errorf("find postgres: $CAIRN_POSTGRES_BIN=%s has no initdb", d)
		}
		return d, nil
	}
	if d := "/usr/lib/postgresql/15/bin"; fileExists(filepath.Join(d, "initdb")) {
		return d, nil
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", errors.New("find postgres: no initdb in /usr/lib/postgresql/15/bin or on PATH; run `make deps` (or `apt-get install postgresql-15`), or set CAIRN_POSTGRES_BIN")
}
