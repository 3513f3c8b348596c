package server

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	units "github.com/docker/go-units"
	corev1 "k8s.io/api/core/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
)

// KeyRule is what Validate asks of one config key beyond its type: a
// numeric range, a set of values, a pattern, or a relation to other keys
// in words. The generated configuration reference (docs/configuration.md)
// prints the same rule, so each bound is written once, in configRules.
type KeyRule struct {
	min, max       int64
	hasMin, hasMax bool
	above          bool // min itself is refused
	bytes          bool // the numbers are byte sizes
	values         []string
	pattern        string
	also           string
}

func atLeast(n int64) KeyRule         { return KeyRule{min: n, hasMin: true} }
func greaterThan(n int64) KeyRule     { return KeyRule{min: n, hasMin: true, above: true} }
func between(lo, hi int64) KeyRule    { return KeyRule{min: lo, max: hi, hasMin: true, hasMax: true} }
func oneOf(values ...string) KeyRule  { return KeyRule{values: values} }
func matching(pattern string) KeyRule { return KeyRule{pattern: pattern} }

// relation is a rule the validator checks in its own code because it
// involves other keys; the table only words it, in Markdown, for the
// reference.
func relation(words string) KeyRule { return KeyRule{also: words} }

// inBytes marks the rule's numbers as byte sizes.
func (r KeyRule) inBytes() KeyRule {
	r.bytes = true
	return r
}

// and adds a relation to other keys, in words (Markdown).
func (r KeyRule) and(words string) KeyRule {
	r.also = words
	return r
}

var (
	positive = atLeast(1)
	// Port 0 lets the kernel pick a free port, which tests rely on; the
	// database's port must be a real one.
	anyPort     = between(0, 65535)
	realPort    = between(1, 65535)
	logLevels   = oneOf("warn", "info", "debug")
	presignTTL  = between(minPresignTTLSecs, maxPresignTTLSecs)
	partBytes   = between(cairn.MinPartSize, cairn.MaxPartSize).inBytes()
	tokenScopes = oneOf(route.Names(route.TokenScopes)...).and("at least one")
)

// configRules maps each dotted key with a rule to it; the elements of a
// list are spelled key[]. Validate reads the ranges and values from here.
var configRules = map[string]KeyRule{
	"appName":                                matching(appNamePattern),
	"persistence.sql.app.port":               realPort,
	"persistence.sql.app.hosts":              relation("each `host:port`, the port " + realPort.Range() + ", each at most once"),
	"metrics.maxRequests":                    positive,
	"metrics.service.appPort":                anyPort,
	"metrics.service.timeoutSecs.read":       positive,
	"metrics.service.timeoutSecs.write":      positive,
	"metrics.service.timeoutSecs.idle":       positive,
	"api.service.appPort":                    anyPort,
	"api.service.timeoutSecs.read":           positive,
	"api.service.timeoutSecs.write":          positive,
	"api.service.timeoutSecs.idle":           positive,
	"api.apis.requestLogging.logLevel":       logLevels,
	"api.apis.requestLogging.healthLogLevel": logLevels,
	"server.shutdownGraceSecs":               between(1, maxShutdownGraceSecs),
	"auth.tokens[].scopes":                   tokenScopes,
	"workspace.volumeType":                   oneOf("docker", "kubernetes"),
	"artifact.s3.clientTTL":                  atLeast(minClientTTL),
	"artifact.s3.verify":                     oneOf(VerifyByStore, VerifyByServer),
	"artifact.store.putUrlTTLSecs":           presignTTL,
	"artifact.store.getUrlMaxTTLSecs":        presignTTL,
	"artifact.store.maxObjectSize":           between(1, maxObjectSizeCap).inBytes(),
	"artifact.store.multipartThreshold":      partBytes,
	"artifact.store.partSize":                partBytes,
	"artifact.store.prefix.store":            relation("must not overlap `artifact.store.prefix.staging`"),
	"artifact.sidecar.timeoutSecs":           positive,
	"artifact.sidecar.maxConcurrent":         positive,
	"maintenance.sweepIntSec":                positive,
	"lifecycle.defaultTTLSecs":               between(0, cairn.MaxTTLSecs),
	"lifecycle.warnBeforeSecs":               between(0, cairn.MaxTTLSecs),
	"lifecycle.archiveIdleAfterSecs":         between(0, cairn.MaxTTLSecs),
	"maintenance.objAgeOutSec": greaterThan(0).and(
		fmt.Sprintf("more than `artifact.store.putUrlTTLSecs` + %d", putURLGraceSecs)),
	"shell.umask":                          matching(shellUmask.String()),
	"shell.instanceName":                   relation(fmt.Sprintf("at most %d printable characters", maxInstanceName)),
	"shell.reapIntervalSecs":               positive,
	"shell.limits.maxSessions":             positive,
	"shell.limits.maxSessionsPerWorkspace": positive,
	"shell.limits.memoryMiB":               positive,
	"shell.limits.cpus":                    greaterThan(0),
	"shell.limits.pids":                    positive,
	"shell.limits.nofile":                  positive,
	"shell.limits.tmpfsMiB":                positive,
	"shell.timeouts.openSecs":              between(1, int64(cairn.MaxStartWait/time.Second)),
	"shell.timeouts.idleSecs":              atLeast(0),
	"shell.timeouts.idleWarningSecs":       atLeast(0).and("less than `shell.timeouts.idleSecs` unless that is 0"),
	"shell.timeouts.maxLifetimeSecs":       positive,
	"shell.timeouts.pingIntervalSecs":      positive,
	"shell.timeouts.pongWaitSecs":          relation("more than `shell.timeouts.pingIntervalSecs`"),
	"shell.timeouts.writeWaitSecs":         positive,
	"shell.timeouts.stopSecs":              positive,
	"shell.timeouts.drainSecs":             positive,
	"shell.timeouts.detachedSecs":          positive,
	"shell.replay.scrollbackLines":         between(0, maxScrollbackLines),
	"shell.record.maxBytes": greaterThan(0).inBytes().and(fmt.Sprintf(
		"with `shell.enable`, at most `artifact.store.maxObjectSize` and at most %s", bytesText(cairn.MaxPartSize))),
	"files.browse.idleSecs":          positive,
	"files.browse.maxContainers":     positive,
	"files.unpack.maxEntries":        positive,
	"files.unpack.maxBytes":          atLeast(1).inBytes(),
	"files.unpack.maxRatio":          positive,
	"files.write.maxBytes":           between(1, cairn.MaxFileWriteBytes).inBytes(),
	"files.watch.pollMillis":         between(0, 60_000).and("0 for inotify, else at least 10"),
	"ssh.authorizedKeys[].scopes":    tokenScopes,
	"ssh.maxSessions":                positive,
	"ssh.maxSessionsPerKey":          positive.and("at most `ssh.maxSessions`"),
	"ssh.idleTimeoutSecs":            positive,
	"ssh.maxLifetimeSecs":            positive,
	"webhooks[].events":              oneOf(eventTypeNames()...),
	"webhooks[].maxAttempts":         between(0, 50).and("0 for the default, 10"),
	"kubernetes.namespace":           matching(dnsLabel.String()),
	"kubernetes.accessMode":          oneOf(string(corev1.ReadWriteOnce), string(corev1.ReadWriteMany), string(corev1.ReadWriteOncePod)),
	"kubernetes.imagePullPolicy":     oneOf(string(corev1.PullNever), string(corev1.PullIfNotPresent), string(corev1.PullAlways)),
	"kubernetes.podStartTimeoutSecs": between(1, int64(cairn.MaxStartWait/time.Second)),
	"kubernetes.nodeLostSecs":        between(1, 3600),
	"kubernetes.maxVolumeSize":       relation("at least `kubernetes.volumeSize`"),
}

// ConfigRule returns the rule of a dotted key (list elements spelled
// key[]), if it has one.
func ConfigRule(key string) (KeyRule, bool) {
	r, ok := configRules[key]
	return r, ok
}

// Range is the rule's numeric range in words ("at least 1", "between 5
// and 604800"), or "".
func (r KeyRule) Range() string {
	switch {
	case r.hasMin && r.hasMax:
		return fmt.Sprintf("between %s and %s", r.Format(r.min), r.Format(r.max))
	case r.above:
		return "greater than " + r.Format(r.min)
	case r.hasMin:
		return "at least " + r.Format(r.min)
	}
	return ""
}

// Values are the allowed values, if the rule lists them.
func (r KeyRule) Values() []string { return slices.Clone(r.values) }

// Pattern is the regular expression a value must match, or "".
func (r KeyRule) Pattern() string { return r.pattern }

// Also is a further rule in words (Markdown), usually relating the key to
// others.
func (r KeyRule) Also() string { return r.also }

// Format renders a number of the rule's key; a byte size gets its binary
// unit too: "67108864 (64 MiB)".
func (r KeyRule) Format(n int64) string {
	if !r.bytes || n < units.KiB {
		return strconv.FormatInt(n, 10)
	}
	return bytesText(n)
}

func bytesText(n int64) string {
	iec := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	return fmt.Sprintf("%d (%s)", n, units.CustomSize("%.4g %s", float64(n), 1024, iec))
}

// allows reports whether v is one of the rule's values.
func (r KeyRule) allows(v string) bool { return slices.Contains(r.values, v) }

// inRange checks v against the range of key's rule and reports whether it
// holds. Every key it is called with has a range; one without is a bug.
func inRange[T int | int64 | float64](p *configProblems, key string, v T) bool {
	r := configRules[key]
	if !r.hasMin && !r.hasMax {
		panic("config: no range for key " + key)
	}
	if r.hasMin && (v < T(r.min) || r.above && v == T(r.min)) || r.hasMax && v > T(r.max) {
		p.add(key, "must be %s, got %v", r.Range(), v)
		return false
	}
	return true
}

// allowed checks v against the values of key's rule.
func (p *configProblems) allowed(key, v string) {
	if r := configRules[key]; !r.allows(v) {
		p.add(key, "must be one of %s, got %q", strings.Join(r.values, ", "), v)
	}
}

// orList joins values as a sentence does: "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
