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
	"github.com/cairn-dev/cairn/server/auth"
)

// Validate checks every rule of the configuration and returns all violations
// joined, each naming its dotted key. It reads the file system only to check
// that persistence.sql.app.ssl.caFile exists. The no-token rule
// (auth.CheckExposure) is not checked here: it depends on the listeners and
// is the server's to enforce at start, with Loopback.
func (c *Config) Validate() error {
	var p configProblems
	p.appName("appName", c.AppName)
	c.Persistence.SQL.App.validate(&p)
	c.Metrics.validate(&p)
	c.API.validate(&p)
	inRange(&p, "server.shutdownGraceSecs", c.Server.ShutdownGraceSecs)
	c.Auth.validate(&p)
	switch volumeTypes := configRules["workspace.volumeType"]; {
	case !volumeTypes.allows(c.Workspace.VolumeType):
		p.add("workspace.volumeType", "must be %s, got %q", orList(volumeTypes.values), c.Workspace.VolumeType)
	case c.Workspace.VolumeType == "kubernetes":
		c.Kubernetes.validate(&p)
	}
	c.Artifact.S3.validate(&p)
	c.Artifact.Store.validate(&p)
	c.Artifact.Sidecar.validate(&p)
	c.Maintenance.validate(&p, c.Artifact.Store.PutURLTTLSecs)
	inRange(&p, "lifecycle.defaultTTLSecs", c.Lifecycle.DefaultTTLSecs)
	inRange(&p, "lifecycle.warnBeforeSecs", c.Lifecycle.WarnBeforeSecs)
	inRange(&p, "lifecycle.archiveIdleAfterSecs", c.Lifecycle.ArchiveIdleAfterSecs)
	c.Shell.validate(&p)
	c.Shell.Record.validate(&p, c.Shell.Enable, c.Artifact.Store.MaxObjectSize)
	c.Files.validate(&p)
	c.SSH.validate(&p)
	validateWebhooks(&p, c.Webhooks)
	return errors.Join(p...)
}

func (f FilesConfig) validate(p *configProblems) {
	inRange(p, "files.browse.idleSecs", f.Browse.IdleSecs)
	inRange(p, "files.browse.maxContainers", f.Browse.MaxContainers)
	inRange(p, "files.unpack.maxEntries", f.Unpack.MaxEntries)
	inRange(p, "files.unpack.maxBytes", f.Unpack.MaxBytes)
	inRange(p, "files.unpack.maxRatio", f.Unpack.MaxRatio)
	inRange(p, "files.write.maxBytes", f.Write.MaxBytes)
	inRange(p, "files.watch.pollMillis", f.Watch.PollMillis)
	if f.Watch.PollMillis > 0 && f.Watch.PollMillis < 10 {
		p.add("files.watch.pollMillis", "must be 0 (inotify) or at least 10 milliseconds")
	}
}

func (s SQLAppConfig) validate(p *configProblems) {
	const key = "persistence.sql.app"
	p.required(key+".host", s.Host)
	inRange(p, key+".port", s.Port)
	p.required(key+".db", s.DB)
	p.required(key+".user", s.User)
	seen := make(map[string]int, len(s.Hosts))
	for i, h := range s.Hosts {
		if j, dup := seen[h]; dup {
			p.add(fmt.Sprintf("%s.hosts[%d]", key, i), "%q is already hosts[%d]", h, j)
		}
		seen[h] = i
		p.hostPort(fmt.Sprintf("%s.hosts[%d]", key, i), h)
	}
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
	inRange(p, "metrics.maxRequests", m.MaxRequests)
	m.Service.validate(p, "metrics.service", false)
}

func (l ListenConfig) validate(p *configProblems, key string, localhostOK bool) {
	if !localhostOK || !strings.EqualFold(l.ListenOn, "localhost") {
		p.ipLiteral(key+".listenOn", l.ListenOn)
	}
	inRange(p, key+".appPort", l.AppPort)
	inRange(p, key+".timeoutSecs.read", l.TimeoutSecs.Read)
	inRange(p, key+".timeoutSecs.write", l.TimeoutSecs.Write)
	inRange(p, key+".timeoutSecs.idle", l.TimeoutSecs.Idle)
}

func (a APIConfig) validate(p *configProblems) {
	a.Service.validate(p, "api.service", true)
	p.absPath("api.apis.endPoint.pathPrefix", a.APIs.EndPoint.PathPrefix)
	rl := a.APIs.RequestLogging
	p.allowed("api.apis.requestLogging.logLevel", rl.LogLevel)
	p.allowed("api.apis.requestLogging.healthLogLevel", rl.HealthLogLevel)
	p.headerName("api.apis.requestLogging.requestIDHeader", rl.RequestIDHeader)
	for i, o := range a.CORS.AllowedOrigins {
		p.origin(fmt.Sprintf("api.cors.allowedOrigins[%d]", i), o)
	}
	for i, o := range a.APIs.MCP.AllowedOrigins {
		// Any port is "*"; the rest of the origin is checked as any other.
		p.origin(fmt.Sprintf("api.apis.mcp.allowedOrigins[%d]", i), strings.TrimSuffix(o, ":*"))
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
	if a.OAuth.Resource != "" {
		if err := auth.CheckResource(a.OAuth.Resource); err != nil {
			p.add("auth.oauth.resource", "%v", err)
		}
	}
	if a.OAuth.Audience != "" {
		if err := auth.CheckAudience(a.OAuth.Audience); err != nil {
			p.add("auth.oauth.audience", "%v", err)
		}
	}
	issuers := make(map[string]int, len(a.OAuth.AuthorizationServers))
	for i, s := range a.OAuth.AuthorizationServers {
		key := fmt.Sprintf("auth.oauth.authorizationServers[%d]", i)
		if err := auth.CheckIssuer(s); err != nil {
			p.add(key, "%v", err)
		} else if j, dup := issuers[s]; dup {
			p.add(key, "%q is already authorizationServers[%d]", s, j)
		} else {
			issuers[s] = i
		}
	}
}

func (t TokenConfig) validateScopes(p *configProblems, key string) {
	if len(t.Scopes) == 0 {
		p.add(key, "token %q: needs at least one scope", t.Name)
	}
	for _, s := range t.Scopes {
		if !tokenScopes.allows(s) {
			p.add(key, "token %q: unknown scope %q; want %s", t.Name, s, orList(tokenScopes.values))
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
	inRange(p, "artifact.s3.clientTTL", s.ClientTTL)
	p.allowed("artifact.s3.verify", s.Verify)
}

func (s StoreConfig) validate(p *configProblems) {
	p.required("artifact.store.bucket", s.Bucket)
	inRange(p, "artifact.store.putUrlTTLSecs", s.PutURLTTLSecs)
	inRange(p, "artifact.store.getUrlMaxTTLSecs", s.GetURLMaxTTLSecs)
	inRange(p, "artifact.store.maxObjectSize", s.MaxObjectSize)
	inRange(p, "artifact.store.multipartThreshold", s.MultipartThreshold)
	inRange(p, "artifact.store.partSize", s.PartSize)
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
	inRange(p, "artifact.sidecar.timeoutSecs", s.TimeoutSecs)
	inRange(p, "artifact.sidecar.maxConcurrent", s.MaxConcurrent)
	for i, e := range s.Envs {
		key := fmt.Sprintf("artifact.sidecar.envs[%d]", i)
		p.required(key+".name", e.Name)
		p.required(key+".value", e.Value)
		// CAIRN_* carries the sidecar's own protocol.
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
	inRange(p, "maintenance.sweepIntSec", m.SweepIntSec)
	// An upload may be registered until its PUT URL expires plus a grace
	// minute; the reconciler must not reap the staging object before that.
	if minAge := putURLTTLSecs + putURLGraceSecs; inRange(p, "maintenance.objAgeOutSec", m.ObjAgeOutSec) &&
		m.ObjAgeOutSec <= minAge {
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

// appNamePattern is what appName checks: a valid Docker name prefix.
var appNamePattern = fmt.Sprintf("^[A-Za-z0-9][A-Za-z0-9_-]{0,%d}$", cairn.MaxNameLength-1)

// appName checks a valid Docker name prefix: a valid cairn name
// (cairn.ValidateName) with a letter or digit first.
func (p *configProblems) appName(key, v string) {
	if cairn.ValidateName("app", v) != nil || v[0] == '-' || v[0] == '_' {
		p.add(key, "must match %s, got %q", appNamePattern, v)
	}
}

// hostPort checks host:port with a host and a real port (realPort).
func (p *configProblems) hostPort(key, v string) {
	host, port, err := net.SplitHostPort(v)
	n, perr := strconv.ParseInt(port, 10, 64)
	if err != nil || perr != nil || host == "" || n < realPort.min || n > realPort.max {
		p.add(key, "must be host:port with a port %s, got %q", realPort.Range(), v)
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
// the Origin header.
func (p *configProblems) origin(key, v string) {
	u, err := url.Parse(v)
	// Rebuilding the origin from its parts drops anything else: a path, a
	// query, user info, a trailing slash.
	if err != nil || u.Hostname() == "" || strings.Contains(u.Hostname(), "*") || !strings.EqualFold(u.Scheme+"://"+u.Host, v) || !configValidPort(u.Port(), true) {
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
