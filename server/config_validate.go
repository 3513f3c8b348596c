package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn"
)

// Validate checks every rule of API.md §11.1 and returns all violations
// joined, each naming its dotted key. It reads the file system only to check
// that persistence.sql.app.ssl.caFile exists. The no-token rule of §1.6 is
// not checked here: it depends on the listeners and is the server's to
// enforce at start, with Loopback.
func (c *Config) Validate() error {
	var p configProblems
	p.appName("appName", c.AppName)
	c.Persistence.SQL.App.validate(&p)
	c.Metrics.validate(&p)
	c.API.validate(&p)
	c.Auth.validate(&p)
	switch c.Workspace.VolumeType {
	case "docker":
	case "kubernetes":
		c.Kubernetes.validate(&p)
	default:
		p.add("workspace.volumeType", "must be docker or kubernetes, got %q", c.Workspace.VolumeType)
	}
	c.Artifact.S3.validate(&p)
	c.Artifact.Store.validate(&p)
	c.Artifact.Sidecar.validate(&p)
	c.Maintenance.validate(&p, c.Artifact.Store.PutURLTTLSecs)
	c.Shell.validate(&p)
	c.Shell.Record.validate(&p, c.Shell.Enable, c.Artifact.Store.MaxObjectSize)
	c.Files.validate(&p)
	c.SSH.validate(&p)
	return errors.Join(p...)
}

func (f FilesConfig) validate(p *configProblems) {
	p.atLeast("files.browse.idleSecs", f.Browse.IdleSecs, 1)
	p.atLeast("files.browse.maxContainers", f.Browse.MaxContainers, 1)
	p.atLeast("files.unpack.maxEntries", f.Unpack.MaxEntries, 1)
	if f.Unpack.MaxBytes < 1 {
		p.add("files.unpack.maxBytes", "must be at least 1, got %d", f.Unpack.MaxBytes)
	}
	p.atLeast("files.unpack.maxRatio", f.Unpack.MaxRatio, 1)
}

func (s SQLAppConfig) validate(p *configProblems) {
	const key = "persistence.sql.app"
	p.required(key+".host", s.Host)
	p.port(key+".port", s.Port, false)
	p.required(key+".db", s.DB)
	p.required(key+".user", s.User)
	if s.SSL.Enabled && s.SSL.CAFile == "" {
		p.add(key+".ssl.caFile", "required when ssl.enabled is true")
	}
	if s.SSL.CAFile == "" {
		return
	}
	if fi, err := os.Stat(s.SSL.CAFile); err != nil {
		p.add(key+".ssl.caFile", "%v", err)
	} else if fi.IsDir() {
		p.add(key+".ssl.caFile", "%s is a directory, not a file", s.SSL.CAFile)
	}
}

func (m MetricsConfig) validate(p *configProblems) {
	p.absPath("metrics.metricsEndpoint", m.MetricsEndpoint)
	p.atLeast("metrics.maxRequests", m.MaxRequests, 1)
	m.Service.validate(p, "metrics.service", false)
}

func (l ListenConfig) validate(p *configProblems, key string, localhostOK bool) {
	if !localhostOK || !strings.EqualFold(l.ListenOn, "localhost") {
		p.ipLiteral(key+".listenOn", l.ListenOn)
	}
	// Port 0 lets the kernel pick a free port; tests rely on it.
	p.port(key+".appPort", l.AppPort, true)
	p.atLeast(key+".timeoutSecs.read", l.TimeoutSecs.Read, 1)
	p.atLeast(key+".timeoutSecs.write", l.TimeoutSecs.Write, 1)
	p.atLeast(key+".timeoutSecs.idle", l.TimeoutSecs.Idle, 1)
}

func (a APIConfig) validate(p *configProblems) {
	a.Service.validate(p, "api.service", true)
	p.absPath("api.apis.endPoint.pathPrefix", a.APIs.EndPoint.PathPrefix)
	rl := a.APIs.RequestLogging
	p.oneOf("api.apis.requestLogging.logLevel", rl.LogLevel, "warn", "info", "debug")
	p.oneOf("api.apis.requestLogging.healthLogLevel", rl.HealthLogLevel, "warn", "info", "debug")
	p.headerName("api.apis.requestLogging.requestIDHeader", rl.RequestIDHeader)
	for i, o := range a.CORS.AllowedOrigins {
		p.origin(fmt.Sprintf("api.cors.allowedOrigins[%d]", i), o)
	}
}

func (a AuthConfig) validate(p *configProblems) {
	first := make(map[string]int, len(a.Tokens))
	for i, t := range a.Tokens {
		key := fmt.Sprintf("auth.tokens[%d]", i)
		if err := cairn.ValidateName("token", t.Name); err != nil {
			p.add(key+".name", "%s", cairn.ErrorDetail(err))
		} else if j, dup := first[t.Name]; dup {
			p.add(key+".name", "token name %q is already used by auth.tokens[%d]", t.Name, j)
		} else {
			first[t.Name] = i
		}
		if !configIsSHA256Hex(t.SHA256) {
			p.add(key+".sha256", "token %q: must be 64 lowercase hex digits", t.Name)
		}
		t.validateScopes(p, key+".scopes")
	}
}

func (t TokenConfig) validateScopes(p *configProblems, key string) {
	if len(t.Scopes) == 0 {
		p.add(key, "token %q: needs at least one scope", t.Name)
	}
	for _, s := range t.Scopes {
		switch s {
		case "read", "write", "admin", "shell", "mcp":
		default:
			p.add(key, "token %q: unknown scope %q; want read, write, admin, shell or mcp", t.Name, s)
		}
	}
}

func (s S3Config) validate(p *configProblems) {
	if s.Endpoint == "" {
		p.add("artifact.s3.endpoint", "required")
	} else {
		p.endpoint("artifact.s3.endpoint", s.Endpoint)
	}
	if s.PresignEndpoint != "" {
		p.endpoint("artifact.s3.presignEndpoint", s.PresignEndpoint)
	}
	p.atLeast("artifact.s3.clientTTL", s.ClientTTL, minClientTTL)
}

func (s StoreConfig) validate(p *configProblems) {
	p.required("artifact.store.bucket", s.Bucket)
	p.between("artifact.store.putUrlTTLSecs", s.PutURLTTLSecs, minPresignTTLSecs, maxPresignTTLSecs)
	p.between("artifact.store.getUrlMaxTTLSecs", s.GetURLMaxTTLSecs, minPresignTTLSecs, maxPresignTTLSecs)
	if s.MaxObjectSize <= 0 || s.MaxObjectSize > maxObjectSizeCap {
		p.add("artifact.store.maxObjectSize", "must be between 1 and %d (5 TiB, the S3 object limit), got %d",
			int64(maxObjectSizeCap), s.MaxObjectSize)
	}
	if s.MultipartThreshold < cairn.MinPartSize || s.MultipartThreshold > cairn.MaxPartSize {
		p.add("artifact.store.multipartThreshold", "must be between %d (5 MiB) and %d (5 GiB), got %d",
			int64(cairn.MinPartSize), int64(cairn.MaxPartSize), s.MultipartThreshold)
	}
	if s.PartSize < cairn.MinPartSize || s.PartSize > cairn.MaxPartSize {
		p.add("artifact.store.partSize", "must be between %d (5 MiB) and %d (5 GiB), got %d",
			int64(cairn.MinPartSize), int64(cairn.MaxPartSize), s.PartSize)
	}
	if s.Prefix.Base != "" {
		p.keyPrefix("artifact.store.prefix.base", s.Prefix.Base)
	}
	staging := p.keyPrefix("artifact.store.prefix.staging", s.Prefix.Staging)
	store := p.keyPrefix("artifact.store.prefix.store", s.Prefix.Store)
	// The reconciler reaps old objects under the staging prefix, so the two
	// trees must not overlap, not merely differ.
	if staging && store && configPrefixesOverlap(s.Prefix.Staging, s.Prefix.Store) {
		p.add("artifact.store.prefix.store", "%q overlaps artifact.store.prefix.staging %q; they must be distinct",
			s.Prefix.Store, s.Prefix.Staging)
	}
}

func (s SidecarConfig) validate(p *configProblems) {
	p.required("artifact.sidecar.image", s.Image)
	p.atLeast("artifact.sidecar.timeoutSecs", s.TimeoutSecs, 1)
	p.atLeast("artifact.sidecar.maxConcurrent", s.MaxConcurrent, 1)
	for i, e := range s.Envs {
		key := fmt.Sprintf("artifact.sidecar.envs[%d]", i)
		p.required(key+".name", e.Name)
		p.required(key+".value", e.Value)
		// CAIRN_* carries the sidecar's own protocol (API.md §8.2).
		if strings.HasPrefix(strings.ToUpper(e.Name), "CAIRN_") {
			p.add(key+".name", "%q: names starting with CAIRN_ are reserved", e.Name)
		}
		if strings.Contains(e.Name, "=") {
			p.add(key+".name", "%q must not contain '='", e.Name)
		}
	}
	for i, h := range s.Hosts {
		key := fmt.Sprintf("artifact.sidecar.hosts[%d]", i)
		p.required(key+".host", h.Host)
		p.ipLiteral(key+".address", h.Address)
	}
}

func (m MaintenanceConfig) validate(p *configProblems, putURLTTLSecs int) {
	p.atLeast("maintenance.sweepIntSec", m.SweepIntSec, 1)
	// An upload may be registered until its PUT URL expires plus a grace
	// minute; the reconciler must not reap the staging object before that.
	if minAge := putURLTTLSecs + putURLGraceSecs; m.ObjAgeOutSec <= 0 {
		p.add("maintenance.objAgeOutSec", "must be greater than 0, got %d", m.ObjAgeOutSec)
	} else if m.ObjAgeOutSec <= minAge {
		p.add("maintenance.objAgeOutSec",
			"must exceed artifact.store.putUrlTTLSecs + %d = %d, got %d", putURLGraceSecs, minAge, m.ObjAgeOutSec)
	}
}

// configProblems collects validation failures, each prefixed by its key.
type configProblems []error

func (p *configProblems) add(key, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
}

func (p *configProblems) required(key, v string) {
	if v == "" {
		p.add(key, "required")
	}
}

func (p *configProblems) atLeast(key string, v, least int) {
	if v < least {
		p.add(key, "must be at least %d, got %d", least, v)
	}
}

func (p *configProblems) between(key string, v, lo, hi int) {
	if v < lo || v > hi {
		p.add(key, "must be between %d and %d, got %d", lo, hi, v)
	}
}

func (p *configProblems) port(key string, v int, zeroOK bool) {
	lo := 1
	if zeroOK {
		lo = 0
	}
	p.between(key, v, lo, 65535)
}

func (p *configProblems) oneOf(key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	p.add(key, "must be one of %s, got %q", strings.Join(allowed, ", "), v)
}

// appName checks a valid Docker name prefix: the name rule of API.md §1.8
// with a letter or digit first.
func (p *configProblems) appName(key, v string) {
	if cairn.ValidateName("app", v) != nil || v[0] == '-' || v[0] == '_' {
		p.add(key, "must match ^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$, got %q", v)
	}
}

func (p *configProblems) ipLiteral(key, v string) {
	if _, err := netip.ParseAddr(v); err != nil {
		p.add(key, "must be an IP address, got %q", v)
	}
}

func (p *configProblems) absPath(key, v string) {
	if !strings.HasPrefix(v, "/") {
		p.add(key, "must start with '/', got %q", v)
	}
}

// headerName checks an HTTP header field name (an RFC 9110 token).
func (p *configProblems) headerName(key, v string) {
	ok := v != ""
	for _, c := range v {
		ok = ok && c < 0x7f && (c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' ||
			strings.ContainsRune("!#$%&'*+-.^_`|~", c))
	}
	if !ok {
		p.add(key, "must be an HTTP header name, got %q", v)
	}
}

// keyPrefix checks a clean relative object-key path and reports whether it
// is one: no leading or trailing slash, no empty, "." or ".." segment.
func (p *configProblems) keyPrefix(key, v string) bool {
	if v == "" {
		p.add(key, "required")
		return false
	}
	for _, seg := range strings.Split(v, "/") {
		if seg == "" || seg == "." || seg == ".." {
			p.add(key, "must be a relative path without empty, '.' or '..' segments, got %q", v)
			return false
		}
	}
	return true
}

// origin checks a browser origin, scheme://host[:port], as matched against
// the Origin header (API.md §1.7).
func (p *configProblems) origin(key, v string) {
	u, err := url.Parse(v)
	// Rebuilding the origin from its parts drops anything else: a path, a
	// query, user info, a trailing slash.
	if err != nil || u.Hostname() == "" || !strings.EqualFold(u.Scheme+"://"+u.Host, v) || !configValidPort(u.Port(), true) {
		p.add(key, "must be scheme://host[:port] with no path, got %q", v)
	}
}

// endpoint checks a store address: host:port, or http(s)://host[:port]
// where the scheme implies a default port.
func (p *configProblems) endpoint(key, v string) {
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" ||
			strings.TrimSuffix(v, "/") != u.Scheme+"://"+u.Host || !configValidPort(u.Port(), true) {
			p.add(key, "must be host:port or http(s)://host:port, got %q", v)
		}
		return
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" || strings.Contains(host, "/") || !configValidPort(port, false) {
		p.add(key, "must be host:port or http(s)://host:port, got %q", v)
	}
}

// configValidPort reports whether s is a port number 1..65535, or empty when
// emptyOK; url.Parse checks only that a port is digits.
func configValidPort(s string, emptyOK bool) bool {
	if s == "" {
		return emptyOK
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}

func configPrefixesOverlap(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

func configIsSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
