// Package service holds cairn's rules: validation, guards, transactions,
// audit, and the volume and sidecar flows. Every front door (REST, MCP, the
// shell endpoint, the reconciler) ends in its methods, so each rule is
// written once. It declares the ports it consumes (Store, Runtime) beside
// itself; adapters implement them.
package service

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
)

var (
	_ cairn.WorkspaceService = (*Service)(nil)
	_ cairn.ArtifactService  = (*Service)(nil)
)

// Config holds the service's settings; zero values take defaults.
type Config struct {
	AppName       string      // namespaces volumes, containers and locks; default "cairn"
	Keys          KeyPrefixes // object-key prefixes
	MaxObjectSize int64       // the largest artifact; default 1 GiB
	// MultipartThreshold: a mint that asks for multipart gets a plan above
	// it; default 1 GiB. PartSize is a plan's part size; default 64 MiB.
	MultipartThreshold int64
	PartSize           int64
	// RegisterWindow is how long after its upload an object may still be
	// registered: less than the reaper's grace for never-referenced objects
	// (maintenance.objAgeOutSec), so a register never races the reaper.
	// Default 58 minutes.
	RegisterWindow time.Duration
	PutURLTTL      time.Duration // staging PUT URLs; default 360 s
	GetURLMaxTTL   time.Duration // presigned GETs; default 900 s
	// SidecarTimeout is the runtime's bound on one sidecar run; URLs handed
	// to sidecars outlive it. Default 300 s.
	SidecarTimeout time.Duration
	Logger         *slog.Logger // default: discard
	Now            func() time.Time
	// OnTransfer, when set, sees the bytes of every volume transfer that
	// succeeded, by direction ("volume_to_store", "store_to_volume"). The
	// seam for metrics.
	OnTransfer func(direction string, bytes int64)
	// Unpack bounds what one unpack may write; zero fields take defaults.
	Unpack UnpackLimits
	// VerifyObjects: the store is not trusted to check the SHA-256 a
	// presigned PUT binds (artifact.s3.verify: server), so register reads
	// every uploaded object back and hashes it.
	VerifyObjects bool
	// MaxFileWrite bounds one file write's body (files.write.maxBytes);
	// default cairn.DefaultMaxFileWriteBytes.
	MaxFileWrite int64
	// WatchPoll, when set, has watchers poll this often instead of using
	// inotify (files.watch.pollMillis).
	WatchPoll time.Duration
	// Deliveries lists the webhook deliveries (server/postgres); nil
	// answers an empty list.
	Deliveries DeliveryLister
	// Snapshots keeps snapshots and their content (server/postgres); nil
	// refuses every snapshot operation.
	Snapshots SnapshotStore
	// LifecycleStore and Lifecycle drive expiry and idle archiving; a nil
	// store leaves every workspace as it is.
	LifecycleStore LifecycleStore
	Lifecycle      LifecycleConfig
}

// Service implements the cairn service interfaces.
type Service struct {
	store   Store
	runtime Runtime
	objects ObjectStore
	appName string
	keys    keyScheme
	log     *slog.Logger
	now     func() time.Time
	// onTransfer counts moved bytes; never nil.
	onTransfer func(direction string, bytes int64)

	maxObjectSize      int64
	verifyObjects      bool
	multipartThreshold int64
	partSize           int64
	registerWindow     time.Duration
	putURLTTL          time.Duration
	getURLMaxTTL       time.Duration
	// sidecarTimeout bounds one sidecar run.
	sidecarTimeout time.Duration
	unpackLimits   UnpackLimits
	maxFileWrite   int64
	watchPoll      time.Duration
	deliveries     DeliveryLister
	snapshots      SnapshotStore
	lifecycleStore LifecycleStore
	lifecycle      LifecycleConfig
	activity       activityMarks
	watches        watchHubs

	mounts      *mountCounter
	dockerCheck cachedCheck
	storeCheck  cachedCheck
	// openShells names a workspace's open shells for a volume_in_use
	// refusal; set by NewShells, nil without the shell.
	openShells func(ctx context.Context, workspaceID string) []string
	// leftovers are the discards that failed, for the next pass.
	leftovers Leftovers
}

// New returns a Service over the given adapters.
func New(store Store, runtime Runtime, objects ObjectStore, cfg Config) *Service {
	s := &Service{
		store:         store,
		runtime:       runtime,
		objects:       objects,
		appName:       cmp.Or(cfg.AppName, "cairn"),
		keys:          newKeyScheme(cfg.Keys),
		log:           cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		now:           cfg.Now,
		maxObjectSize: cmp.Or(cfg.MaxObjectSize, 1<<30),
		verifyObjects: cfg.VerifyObjects,
		// A part is never below the store's minimum, whatever the config.
		multipartThreshold: cmp.Or(cfg.MultipartThreshold, 1<<30),
		partSize:           max(cmp.Or(cfg.PartSize, 64<<20), cairn.MinPartSize),
		registerWindow:     cmp.Or(cfg.RegisterWindow, 58*time.Minute),
		putURLTTL:          cmp.Or(cfg.PutURLTTL, 360*time.Second),
		getURLMaxTTL:       cmp.Or(cfg.GetURLMaxTTL, 900*time.Second),
		sidecarTimeout:     cmp.Or(cfg.SidecarTimeout, 300*time.Second),
		unpackLimits:       cfg.Unpack.withDefaults(),
		maxFileWrite:       cmp.Or(cfg.MaxFileWrite, cairn.DefaultMaxFileWriteBytes),
		watchPoll:          cfg.WatchPoll,
		deliveries:         cfg.Deliveries,
		snapshots:          cfg.Snapshots,
		lifecycleStore:     cfg.LifecycleStore,
		lifecycle:          cfg.Lifecycle,
	}
	if s.now == nil {
		s.now = cairn.Now
	}
	if s.onTransfer = cfg.OnTransfer; s.onTransfer == nil {
		s.onTransfer = func(string, int64) {}
	}
	if runtime != nil {
		s.mounts = &mountCounter{count: runtime.MountCounts}
	}
	return s
}

// audit records one event through st, normally inside the transaction of the
// change it describes. The request ID of ctx, when it has one, goes into the
// metadata as request_id.
func (s *Service) audit(ctx context.Context, st Store, typ cairn.AuditType, meta map[string]any) error {
	return st.InsertAudit(ctx, s.auditEvent(ctx, typ, meta))
}

// auditEvent is the event audit records, for a store port that records it
// in a transaction of its own.
func (s *Service) auditEvent(ctx context.Context, typ cairn.AuditType, meta map[string]any) *cairn.AuditEvent {
	return &cairn.AuditEvent{
		ID:        ulid.Make().String(),
		Type:      typ,
		Actor:     cairn.ActorFrom(ctx),
		Metadata:  withRequestID(ctx, meta),
		CreatedAt: s.now(),
	}
}

// withRequestID returns meta with ctx's request ID added, copied so the
// caller's map is left as it was; meta itself outside a request.
func withRequestID(ctx context.Context, meta map[string]any) map[string]any {
	id := cairn.RequestIDFrom(ctx)
	if id == "" {
		return meta
	}
	out := make(map[string]any, len(meta)+1)
	maps.Copy(out, meta)
	out["request_id"] = id
	return out
}
