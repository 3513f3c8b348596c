package wsexec

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// OptionsHeader carries how to run the command, when anything but the
// defaults: base64url (no padding) of a JSON Options object. A header,
// like the argv, because environment values may be secrets.
const OptionsHeader = "Cairn-Exec-Options"

// Options are how to run a command besides its argv.
type Options struct {
	// Dir is the working directory, a directory of the volume; the mount
	// root when empty.
	Dir string `json:"dir,omitempty"`
	// Env adds variables to the command's environment.
	Env map[string]string `json:"env,omitempty"`
	// TimeoutS ends the command this many seconds after it started, with
	// reason timeout; 0 leaves only the maximum lifetime.
	TimeoutS int `json:"timeout_s,omitempty"`
}

// Bounds of Options.
const (
	MaxEnvVars      = 64
	MaxOptionsBytes = 64 << 10
)

// envName is a portable environment variable name (POSIX).
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)

// EncodeOptions renders the header value, "" for the defaults.
func EncodeOptions(o Options) (string, error) {
	if err := o.Check(); err != nil {
		return "", err
	}
	if o.Dir == "" && len(o.Env) == 0 && o.TimeoutS == 0 {
		return "", nil
	}
	b, err := json.Marshal(o)
	if err != nil {
		return "", fmt.Errorf("encode the exec options: %w", err)
	}
	if len(b) > MaxOptionsBytes {
		return "", fmt.Errorf("the exec options are %d bytes as JSON, more than %d", len(b), MaxOptionsBytes)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// DecodeOptions reads the header value ("" is the defaults) and checks it.
func DecodeOptions(v string) (Options, error) {
	var o Options
	if v == "" {
		return o, nil
	}
	if base64.RawURLEncoding.DecodedLen(len(v)) > MaxOptionsBytes {
		return o, fmt.Errorf("the exec options are more than %d bytes", MaxOptionsBytes)
	}
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(v, "="))
	if err != nil {
		return o, fmt.Errorf("the %s header is not base64url", OptionsHeader)
	}
	if !utf8.Valid(b) || json.Unmarshal(b, &o) != nil {
		return o, fmt.Errorf("the %s header is not a JSON object of dir, env and timeout_s", OptionsHeader)
	}
	return o, o.Check()
}

// Check refuses options that cannot run: more than MaxEnvVars variables,
// a name that is not portable or is cairn's own (CAIRN_*), a value with a
// NUL or invalid UTF-8, a negative timeout. The directory is the
// server's to check against the volume.
func (o Options) Check() error {
	if len(o.Env) > MaxEnvVars {
		return fmt.Errorf("at most %d environment variables, not %d", MaxEnvVars, len(o.Env))
	}
	for name, value := range o.Env {
		switch {
		case !envName.MatchString(name):
			return fmt.Errorf("%q is not an environment variable name: letters, digits and _, not starting with a digit", name)
		case strings.HasPrefix(name, "CAIRN_"):
			return fmt.Errorf("%s: the CAIRN_ variables are cairn's own", name)
		case !utf8.ValidString(value) || strings.IndexByte(value, 0) >= 0:
			return fmt.Errorf("the value of %s is not UTF-8 text without NUL", name)
		}
	}
	if o.TimeoutS < 0 {
		return fmt.Errorf("timeout_s %d is negative", o.TimeoutS)
	}
	return nil
}

// EnvList renders Env as NAME=value strings, sorted by name.
func (o Options) EnvList() []string {
	out := make([]string, 0, len(o.Env))
	for name, value := range o.Env {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out
}
