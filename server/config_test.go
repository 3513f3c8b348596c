package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// minimalYAML sets only the two keys without a default.
const minimalYAML = `
artifact:
  s3:
    endpoint: store.internal:7070
  store:
    bucket: cairn
`

// validConfig returns the defaults with the two required keys set.
func validConfig() Config {
	c := DefaultConfig()
	c.Artifact.S3.Endpoint = "store.internal:7070"
	c.Artifact.Store.Bucket = "cairn"
	return c
}

const testSHA256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

func TestParseConfig(t *testing.T) {
	t.Parallel()

	t.Run("DefaultsRoundTrip", func(t *testing.T) {
		t.Parallel()
		c, warnings, err := ParseConfig([]byte(minimalYAML))
		require.NoError(t, err)
		require.Empty(t, warnings)
		require.NoError(t, c.Validate())
		require.Equal(t, validConfig(), c)
	})

	t.Run("EmptyDocument", func(t *testing.T) {
		t.Parallel()
		c, warnings, err := ParseConfig(nil)
		require.NoError(t, err)
		require.Empty(t, warnings)
		require.Equal(t, DefaultConfig(), c)
	})

	t.Run("Overrides", func(t *testing.T) {
		t.Parallel()
		c, _, err := ParseConfig([]byte(`
appName: dev-1
api:
  service: {listenOn: 127.0.0.1, appPort: 0, timeoutSecs: {write: 900}}
  apis:
    requestLogging: {skipHeaders: [Cookie]}
    mcp: {enable: true}
  cors: {allowedOrigins: ["http://localhost:5173"]}
auth:
  tokens:
    - {name: ci, sha256: ` + testSHA256 + `, scopes: [read, write]}
artifact:
  s3: {endpoint: "store.internal:7070"}
  store: {bucket: cairn}
  sidecar:
    networkMode: ""
    envs: [{name: AWS_REGION, value: us-east-1}]
shell: {enable: true}
maintenance:
  sweepIntSec: ~
`))
		require.NoError(t, err)
		require.NoError(t, c.Validate())
		require.Equal(t, "dev-1", c.AppName)
		require.Equal(t, "127.0.0.1", c.API.Service.ListenOn)
		require.Equal(t, 0, c.API.Service.AppPort)
		require.Equal(t, Timeouts{Read: 60, Write: 900, Idle: 60}, c.API.Service.TimeoutSecs)
		require.Equal(t, []string{"Cookie"}, c.API.APIs.RequestLogging.SkipHeaders)
		require.True(t, c.API.APIs.MCP.Enable)
		require.True(t, c.API.APIs.MCP.EnableDNSRebindGuard)
		require.Equal(t, []TokenConfig{{Name: "ci", SHA256: testSHA256, Scopes: []string{"read", "write"}}}, c.Auth.Tokens)
		require.Equal(t, "bridge", c.Artifact.Sidecar.NetworkMode)
		require.Equal(t, []EnvVar{{Name: "AWS_REGION", Value: "us-east-1"}}, c.Artifact.Sidecar.Envs)
		require.True(t, c.Shell.Enable)
		require.Equal(t, 300, c.Maintenance.SweepIntSec)
		// Keys absent from the file keep their defaults.
		require.Equal(t, "store.internal:7070", c.Artifact.S3.Endpoint)
		require.Equal(t, 8, c.Artifact.Sidecar.MaxConcurrent)
	})
}

func TestDefaultConfig(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	for name, tc := range map[string]struct{ got, want any }{
		"appName":                     {c.AppName, "cairn"},
		"sql":                         {c.Persistence.SQL.App, SQLAppConfig{Host: "127.0.0.1", Port: 5432, DB: "cairn", User: "cairn"}},
		"metricsEndpoint":             {c.Metrics.MetricsEndpoint, "/metrics"},
		"maxRequests":                 {c.Metrics.MaxRequests, 4},
		"features":                    {c.Metrics.Features, MetricsFeatures{EnableHTTPMetrics: true}},
		"metrics.service":             {c.Metrics.Service, ListenConfig{"0.0.0.0", 3001, Timeouts{60, 60, 60}}},
		"api.service":                 {c.API.Service, ListenConfig{"0.0.0.0", 44123, Timeouts{60, 660, 60}}},
		"pathPrefix":                  {c.API.APIs.EndPoint.PathPrefix, "/"},
		"logLevel":                    {c.API.APIs.RequestLogging.LogLevel, "warn"},
		"healthLogLevel":              {c.API.APIs.RequestLogging.HealthLogLevel, "debug"},
		"requestIDHeader":             {c.API.APIs.RequestLogging.RequestIDHeader, "X-Request-ID"},
		"skipHeaders":                 {c.API.APIs.RequestLogging.SkipHeaders, []string{"WWW-Authenticate", "Authorization", "Proxy-Authenticate", "Proxy-Authorization"}},
		"mcp":                         {c.API.APIs.MCP, MCPConfig{Enable: false, EnableDNSRebindGuard: true}},
		"volumeType":                  {c.Workspace.VolumeType, "docker"},
		"s3":                          {c.Artifact.S3, S3Config{UseTLS: true, ClientTTL: 3600, Verify: VerifyByStore}},
		"putUrlTTLSecs":               {c.Artifact.Store.PutURLTTLSecs, 360},
		"getUrlMaxTTLSecs":            {c.Artifact.Store.GetURLMaxTTLSecs, 900},
		"maxObjectSize":               {c.Artifact.Store.MaxObjectSize, int64(1073741824)},
		"multipartThreshold":          {c.Artifact.Store.MultipartThreshold, int64(1073741824)},
		"partSize":                    {c.Artifact.Store.PartSize, int64(67108864)},
		"prefix":                      {c.Artifact.Store.Prefix, PrefixConfig{Staging: "staging", Store: "store"}},
		"sidecar":                     {c.Artifact.Sidecar, SidecarConfig{Image: "cairn-sidecar:latest", TimeoutSecs: 300, NetworkMode: "bridge", MaxConcurrent: 8}},
		"maintenance":                 {c.Maintenance, MaintenanceConfig{SweepIntSec: 300, ObjAgeOutSec: 3600}},
		"shell":                       {c.Shell, DefaultShellConfig()},
		"auth":                        {c.Auth, AuthConfig{}},
		"cors":                        {c.API.CORS, CORSConfig{}},
		"logRequestPayload, debugLog": {c.API.APIs.RequestLogging.LogRequestPayload || c.Persistence.SQL.App.DebugLog, false},
	} {
		require.Equal(t, tc.want, tc.got, name)
	}
}

func TestParseConfigIgnoredKeys(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		yaml  string
		names []string
	}{
		"Tasking":       {"tasking: {workers: 4, queue: {x: 1}}", []string{"tasking.*"}},
		"Redis":         {"persistence: {redis: {host: r}}", []string{"persistence.redis.*"}},
		"SQLTasking":    {"persistence: {sql: {tasking: {db: t}}}", []string{"persistence.sql.tasking.*"}},
		"TaskAgeOutSec": {"maintenance: {taskAgeOutSec: 60}", []string{"maintenance.taskAgeOutSec"}},
		"AllFourAtOnce": {`
tasking: {workers: 4}
persistence: {redis: {host: r}, sql: {tasking: {db: t}, app: {db: cairn}}}
maintenance: {taskAgeOutSec: 60, sweepIntSec: 30}
`, []string{"tasking.*", "persistence.redis.*", "persistence.sql.tasking.*", "maintenance.taskAgeOutSec"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, warnings, err := ParseConfig([]byte(minimalYAML + tc.yaml))
			require.NoError(t, err)
			require.NoError(t, c.Validate())
			require.Len(t, warnings, 1)
			for _, n := range tc.names {
				require.Contains(t, warnings[0], n)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ yaml, want string }{
		"UnknownTopLevel":       {"bogus: 1", `unknown key "bogus"`},
		"UnknownNested":         {"api: {servce: {appPort: 1}}", `unknown key "api.servce"`},
		"UnknownDeep":           {"api: {service: {timeoutSecs: {wirte: 1}}}", `unknown key "api.service.timeoutSecs.wirte"`},
		"UnknownInListElement":  {"auth: {tokens: [{nmae: ci}]}", `unknown key "auth.tokens[0].nmae"`},
		"UnknownShellKey":       {"shell: {imag: x}", `unknown key "shell.imag"`},
		"IgnoredOnlyWhereKnown": {"api: {tasking: {}}", `unknown key "api.tasking"`},
		"Duplicate":             {"appName: a\nappName: b", `duplicate key "appName"`},
		"WrongTypeInt":          {"api: {service: {appPort: abc}}", `key "api.service.appPort"`},
		"WrongTypeBool":         {"shell: {enable: maybe}", `key "shell.enable"`},
		"WrongTypeSection":      {"api: 5", `key "api"`},
		"WrongTypeList":         {"auth: {tokens: {name: ci}}", `key "auth.tokens"`},
		"WrongTypeStringList":   {"api: {cors: {allowedOrigins: {a: b}}}", `key "api.cors.allowedOrigins"`},
		"WrongTypeInListElem":   {"artifact: {sidecar: {hosts: [{host: [a]}]}}", `key "artifact.sidecar.hosts[0].host"`},
		"WrongTypeTopLevel":     {"- a", "top level"},
		"Syntax":                {"api: [", "yaml"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := ParseConfig([]byte(tc.yaml))
			require.ErrorContains(t, err, tc.want)
		})
	}

	t.Run("AllReported", func(t *testing.T) {
		t.Parallel()
		_, _, err := ParseConfig([]byte("bogus: 1\napi: {servce: 1, service: {appPort: x}}"))
		require.ErrorContains(t, err, `"bogus"`)
		require.ErrorContains(t, err, `"api.servce"`)
		require.ErrorContains(t, err, `"api.service.appPort"`)
	})
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	missingFile := filepath.Join(t.TempDir(), "missing.pem")

	for name, tc := range map[string]struct {
		mutate func(c *Config)
		key    string
	}{
		"AppNameEmpty":            {func(c *Config) { c.AppName = "" }, "appName"},
		"AppNameLeadingDash":      {func(c *Config) { c.AppName = "-cairn" }, "appName"},
		"AppNameDot":              {func(c *Config) { c.AppName = "cairn.dev" }, "appName"},
		"AppNameTooLong":          {func(c *Config) { c.AppName = strings.Repeat("a", 129) }, "appName"},
		"SQLHost":                 {func(c *Config) { c.Persistence.SQL.App.Host = "" }, "persistence.sql.app.host"},
		"SQLPortZero":             {func(c *Config) { c.Persistence.SQL.App.Port = 0 }, "persistence.sql.app.port"},
		"SQLDB":                   {func(c *Config) { c.Persistence.SQL.App.DB = "" }, "persistence.sql.app.db"},
		"SQLUser":                 {func(c *Config) { c.Persistence.SQL.App.User = "" }, "persistence.sql.app.user"},
		"SQLHostsNoPort":          {func(c *Config) { c.Persistence.SQL.App.Hosts = []string{"db-a"} }, "persistence.sql.app.hosts[0]"},
		"SQLHostsPortZero":        {func(c *Config) { c.Persistence.SQL.App.Hosts = []string{"db-a:0"} }, "persistence.sql.app.hosts[0]"},
		"SQLHostsNoHost":          {func(c *Config) { c.Persistence.SQL.App.Hosts = []string{":5432"} }, "persistence.sql.app.hosts[0]"},
		"SQLHostsTwice":           {func(c *Config) { c.Persistence.SQL.App.Hosts = []string{"a:1", "a:1"} }, "persistence.sql.app.hosts[1]"},
		"SSLWithoutCAFile":        {func(c *Config) { c.Persistence.SQL.App.SSL.Enabled = true }, "persistence.sql.app.ssl.caFile"},
		"SSLCAFileMissing":        {func(c *Config) { c.Persistence.SQL.App.SSL = SSLConfig{true, missingFile} }, "persistence.sql.app.ssl.caFile"},
		"SSLCAFileIsDir":          {func(c *Config) { c.Persistence.SQL.App.SSL = SSLConfig{true, os.TempDir()} }, "persistence.sql.app.ssl.caFile"},
		"MetricsEndpoint":         {func(c *Config) { c.Metrics.MetricsEndpoint = "metrics" }, "metrics.metricsEndpoint"},
		"MetricsMaxRequests":      {func(c *Config) { c.Metrics.MaxRequests = 0 }, "metrics.maxRequests"},
		"MetricsListenOnHostname": {func(c *Config) { c.Metrics.Service.ListenOn = "localhost" }, "metrics.service.listenOn"},
		"MetricsPort":             {func(c *Config) { c.Metrics.Service.AppPort = 65536 }, "metrics.service.appPort"},
		"MetricsReadTimeout":      {func(c *Config) { c.Metrics.Service.TimeoutSecs.Read = 0 }, "metrics.service.timeoutSecs.read"},
		"APIListenOnHostname":     {func(c *Config) { c.API.Service.ListenOn = "example.com" }, "api.service.listenOn"},
		"APIPortNegative":         {func(c *Config) { c.API.Service.AppPort = -1 }, "api.service.appPort"},
		"APIWriteTimeout":         {func(c *Config) { c.API.Service.TimeoutSecs.Write = 0 }, "api.service.timeoutSecs.write"},
		"APIIdleTimeout":          {func(c *Config) { c.API.Service.TimeoutSecs.Idle = -5 }, "api.service.timeoutSecs.idle"},
		"PathPrefix":              {func(c *Config) { c.API.APIs.EndPoint.PathPrefix = "api" }, "api.apis.endPoint.pathPrefix"},
		"LogLevel":                {func(c *Config) { c.API.APIs.RequestLogging.LogLevel = "error" }, "api.apis.requestLogging.logLevel"},
		"HealthLogLevel":          {func(c *Config) { c.API.APIs.RequestLogging.HealthLogLevel = "" }, "api.apis.requestLogging.healthLogLevel"},
		"RequestIDHeader":         {func(c *Config) { c.API.APIs.RequestLogging.RequestIDHeader = "X Request" }, "api.apis.requestLogging.requestIDHeader"},
		"OriginWithPath":          {func(c *Config) { c.API.CORS.AllowedOrigins = []string{"https://a.example/app"} }, "api.cors.allowedOrigins[0]"},
		"OriginTrailingSlash":     {func(c *Config) { c.API.CORS.AllowedOrigins = []string{"https://ok.example", "https://a.example/"} }, "api.cors.allowedOrigins[1]"},
		"OriginNoScheme":          {func(c *Config) { c.API.CORS.AllowedOrigins = []string{"a.example:8080"} }, "api.cors.allowedOrigins[0]"},
		"MCPOriginWithPath":       {func(c *Config) { c.API.APIs.MCP.AllowedOrigins = []string{"http://localhost:*/x"} }, "api.apis.mcp.allowedOrigins[0]"},
		"MCPOriginStarHost":       {func(c *Config) { c.API.APIs.MCP.AllowedOrigins = []string{"http://*:8080"} }, "api.apis.mcp.allowedOrigins[0]"},
		"OriginWildcard":          {func(c *Config) { c.API.CORS.AllowedOrigins = []string{"*"} }, "api.cors.allowedOrigins[0]"},
		"OriginBadPort":           {func(c *Config) { c.API.CORS.AllowedOrigins = []string{"http://a.example:99999"} }, "api.cors.allowedOrigins[0]"},
		"TokenName":               {func(c *Config) { c.Auth.Tokens = []TokenConfig{{"c i", testSHA256, []string{"read"}}} }, "auth.tokens[0].name"},
		"TokenNameDuplicate": {func(c *Config) {
			c.Auth.Tokens = []TokenConfig{{"ci", testSHA256, []string{"read"}}, {"ci", testSHA256, []string{"write"}}}
		}, "auth.tokens[1].name"},
		"TokenSHA256Upper":      {func(c *Config) { c.Auth.Tokens = []TokenConfig{{"ci", strings.ToUpper(testSHA256), []string{"read"}}} }, "auth.tokens[0].sha256"},
		"TokenSHA256Short":      {func(c *Config) { c.Auth.Tokens = []TokenConfig{{"ci", "abc", []string{"read"}}} }, "auth.tokens[0].sha256"},
		"TokenNoScopes":         {func(c *Config) { c.Auth.Tokens = []TokenConfig{{"ci", testSHA256, nil}} }, "auth.tokens[0].scopes"},
		"TokenUnknownScope":     {func(c *Config) { c.Auth.Tokens = []TokenConfig{{"ci", testSHA256, []string{"read", "root"}}} }, "auth.tokens[0].scopes"},
		"OAuthResourceRelative": {func(c *Config) { c.Auth.OAuth.Resource = "/v1/mcp" }, "auth.oauth.resource"},
		"OAuthResourceQuery":    {func(c *Config) { c.Auth.OAuth.Resource = "https://cairn.example/v1/mcp?x=1" }, "auth.oauth.resource"},
		"OAuthResourceSlash":    {func(c *Config) { c.Auth.OAuth.Resource = "https://cairn.example/v1/mcp/" }, "auth.oauth.resource"},
		"OAuthAudienceSpace":    {func(c *Config) { c.Auth.OAuth.Audience = "api cairn" }, "auth.oauth.audience"},
		"OAuthAudienceLong":     {func(c *Config) { c.Auth.OAuth.Audience = strings.Repeat("a", 2049) }, "auth.oauth.audience"},
		"OAuthIssuerNoScheme":   {func(c *Config) { c.Auth.OAuth.AuthorizationServers = []string{"id.example"} }, "auth.oauth.authorizationServers[0]"},
		"OAuthIssuerFragment": {func(c *Config) {
			c.Auth.OAuth.AuthorizationServers = []string{"https://id.example", "https://id.example/#x"}
		}, "auth.oauth.authorizationServers[1]"},
		"OAuthIssuerTwice": {func(c *Config) {
			c.Auth.OAuth.AuthorizationServers = []string{"https://id.example", "https://id.example"}
		}, "auth.oauth.authorizationServers[1]"},
		"VolumeType":        {func(c *Config) { c.Workspace.VolumeType = "nfs" }, "workspace.volumeType"},
		"EndpointRequired":  {func(c *Config) { c.Artifact.S3.Endpoint = "" }, "artifact.s3.endpoint"},
		"EndpointNoPort":    {func(c *Config) { c.Artifact.S3.Endpoint = "store.internal" }, "artifact.s3.endpoint"},
		"EndpointBadScheme": {func(c *Config) { c.Artifact.S3.Endpoint = "ftp://store:21" }, "artifact.s3.endpoint"},
		"PresignWithPath":   {func(c *Config) { c.Artifact.S3.PresignEndpoint = "https://s3.example:443/x" }, "artifact.s3.presignEndpoint"},
		"PresignBadPort":    {func(c *Config) { c.Artifact.S3.PresignEndpoint = "s3.example:0" }, "artifact.s3.presignEndpoint"},
		"ClientTTL":         {func(c *Config) { c.Artifact.S3.ClientTTL = 59 }, "artifact.s3.clientTTL"},
		"BucketRequired":    {func(c *Config) { c.Artifact.Store.Bucket = "" }, "artifact.store.bucket"},
		"PutTTLLow":         {func(c *Config) { c.Artifact.Store.PutURLTTLSecs = 4 }, "artifact.store.putUrlTTLSecs"},
		"PutTTLHigh":        {func(c *Config) { c.Artifact.Store.PutURLTTLSecs = 7*24*3600 + 1 }, "artifact.store.putUrlTTLSecs"},
		"GetTTLLow":         {func(c *Config) { c.Artifact.Store.GetURLMaxTTLSecs = 0 }, "artifact.store.getUrlMaxTTLSecs"},
		"GetTTLHigh":        {func(c *Config) { c.Artifact.Store.GetURLMaxTTLSecs = 7*24*3600 + 1 }, "artifact.store.getUrlMaxTTLSecs"},
		"MaxObjectSizeZero": {func(c *Config) { c.Artifact.Store.MaxObjectSize = 0 }, "artifact.store.maxObjectSize"},
		"MaxObjectSizeOver": {func(c *Config) { c.Artifact.Store.MaxObjectSize = 5<<40 + 1 }, "artifact.store.maxObjectSize"},
		"ThresholdLow":      {func(c *Config) { c.Artifact.Store.MultipartThreshold = 5<<20 - 1 }, "artifact.store.multipartThreshold"},
		"ThresholdHigh":     {func(c *Config) { c.Artifact.Store.MultipartThreshold = 5<<30 + 1 }, "artifact.store.multipartThreshold"},
		"PartSizeLow":       {func(c *Config) { c.Artifact.Store.PartSize = 5<<20 - 1 }, "artifact.store.partSize"},
		"PartSizeHigh":      {func(c *Config) { c.Artifact.Store.PartSize = 5<<30 + 1 }, "artifact.store.partSize"},
		"PrefixBaseLeading": {func(c *Config) { c.Artifact.Store.Prefix.Base = "/cairn" }, "artifact.store.prefix.base"},
		"PrefixBaseDotDot":  {func(c *Config) { c.Artifact.Store.Prefix.Base = "a/../b" }, "artifact.store.prefix.base"},
		"PrefixStaging":     {func(c *Config) { c.Artifact.Store.Prefix.Staging = "" }, "artifact.store.prefix.staging"},
		"PrefixStagingDot":  {func(c *Config) { c.Artifact.Store.Prefix.Staging = "./staging" }, "artifact.store.prefix.staging"},
		"PrefixStoreSlash":  {func(c *Config) { c.Artifact.Store.Prefix.Store = "store/" }, "artifact.store.prefix.store"},
		"PrefixStoreEmpty":  {func(c *Config) { c.Artifact.Store.Prefix.Store = "a//b" }, "artifact.store.prefix.store"},
		"PrefixesEqual":     {func(c *Config) { c.Artifact.Store.Prefix.Store = "staging" }, "artifact.store.prefix.store"},
		"PrefixesNested":    {func(c *Config) { c.Artifact.Store.Prefix.Store = "staging/store" }, "artifact.store.prefix.store"},
		"SidecarImage":      {func(c *Config) { c.Artifact.Sidecar.Image = "" }, "artifact.sidecar.image"},
		"SidecarTimeout":    {func(c *Config) { c.Artifact.Sidecar.TimeoutSecs = 0 }, "artifact.sidecar.timeoutSecs"},
		"MaxConcurrent":     {func(c *Config) { c.Artifact.Sidecar.MaxConcurrent = 0 }, "artifact.sidecar.maxConcurrent"},
		"EnvNameRequired":   {func(c *Config) { c.Artifact.Sidecar.Envs = []EnvVar{{"", "v"}} }, "artifact.sidecar.envs[0].name"},
		"EnvValueRequired":  {func(c *Config) { c.Artifact.Sidecar.Envs = []EnvVar{{"A", ""}} }, "artifact.sidecar.envs[0].value"},
		"EnvNameCairn":      {func(c *Config) { c.Artifact.Sidecar.Envs = []EnvVar{{"A", "1"}, {"cairn_mode", "x"}} }, "artifact.sidecar.envs[1].name"},
		"EnvNameEquals":     {func(c *Config) { c.Artifact.Sidecar.Envs = []EnvVar{{"A=B", "x"}} }, "artifact.sidecar.envs[0].name"},
		"HostRequired":      {func(c *Config) { c.Artifact.Sidecar.Hosts = []HostEntry{{"", "10.0.0.1"}} }, "artifact.sidecar.hosts[0].host"},
		"HostAddress":       {func(c *Config) { c.Artifact.Sidecar.Hosts = []HostEntry{{"store", "store.internal"}} }, "artifact.sidecar.hosts[0].address"},
		"SweepIntSec":       {func(c *Config) { c.Maintenance.SweepIntSec = 0 }, "maintenance.sweepIntSec"},
		"ObjAgeOutSecZero":  {func(c *Config) { c.Maintenance.ObjAgeOutSec = 0 }, "maintenance.objAgeOutSec"},
		"ObjAgeOutSecShort": {func(c *Config) { c.Maintenance.ObjAgeOutSec = 420 }, "maintenance.objAgeOutSec"},
		"ObjAgeOutVsPutTTL": {func(c *Config) { c.Artifact.Store.PutURLTTLSecs = 3600 }, "maintenance.objAgeOutSec"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			tc.mutate(&c)
			err := c.Validate()
			require.Error(t, err)
			require.True(t, strings.HasPrefix(err.Error(), tc.key+":"), "error %q does not name %s", err, tc.key)
		})
	}
}

func TestConfigValidateAccepts(t *testing.T) {
	t.Parallel()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, []byte("pem"), 0o600))

	for name, mutate := range map[string]func(c *Config){
		"Defaults":     func(c *Config) {},
		"AnyFreePorts": func(c *Config) { c.API.Service.AppPort, c.Metrics.Service.AppPort = 0, 0 },
		"LocalhostAPI": func(c *Config) { c.API.Service.ListenOn = "localhost" },
		"IPv6":         func(c *Config) { c.API.Service.ListenOn, c.Metrics.Service.ListenOn = "::1", "::" },
		"SSL":          func(c *Config) { c.Persistence.SQL.App.SSL = SSLConfig{true, caFile} },
		"SQLHosts":     func(c *Config) { c.Persistence.SQL.App.Hosts = []string{"db-a:5432", "10.0.0.2:5433", "[::1]:5432"} },
		"SchemeEndpoints": func(c *Config) {
			c.Artifact.S3.Endpoint, c.Artifact.S3.PresignEndpoint = "http://store:7070", "https://s3.example/"
		},
		"IPv6Endpoint": func(c *Config) { c.Artifact.S3.Endpoint = "[::1]:7070" },
		"Origins":      func(c *Config) { c.API.CORS.AllowedOrigins = []string{"http://localhost:5173", "https://app.example"} },
		"Tokens": func(c *Config) {
			c.Auth.Tokens = []TokenConfig{{"ci-1", testSHA256, []string{"read", "write", "admin", "shell", "mcp"}}}
		},
		"OAuth": func(c *Config) {
			c.Auth.OAuth = OAuthConfig{Resource: "https://cairn.example/v1/mcp",
				AuthorizationServers: []string{"https://id.example", "http://localhost:8080/realms/cairn"}}
		},
		"Prefixes": func(c *Config) { c.Artifact.Store.Prefix = PrefixConfig{"tenants/a", "stage", "stored"} },
		"SidecarExtras": func(c *Config) {
			c.Artifact.Sidecar.Envs = []EnvVar{{"CAIRNISH", "1"}}
			c.Artifact.Sidecar.Hosts = []HostEntry{{"s", "::1"}}
		},
		"MaxObjectSize5GiB":  func(c *Config) { c.Artifact.Store.MaxObjectSize = 5 << 30 },
		"MaxObjectSize5TiB":  func(c *Config) { c.Artifact.Store.MaxObjectSize = 5 << 40 },
		"SmallParts":         func(c *Config) { c.Artifact.Store.MultipartThreshold, c.Artifact.Store.PartSize = 5<<20, 5<<20 },
		"ObjAgeOutJustOver":  func(c *Config) { c.Maintenance.ObjAgeOutSec = 421 },
		"AppNameUnderscores": func(c *Config) { c.AppName = "a_b-C" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			mutate(&c)
			require.NoError(t, c.Validate())
		})
	}

	t.Run("AllViolationsReported", func(t *testing.T) {
		t.Parallel()
		c := DefaultConfig()
		c.AppName = "_"
		err := c.Validate()
		for _, key := range []string{"appName", "artifact.s3.endpoint", "artifact.store.bucket"} {
			require.ErrorContains(t, err, key+":")
		}
	})
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()

	// write puts files into a fresh directory and returns the directory.
	write := func(t *testing.T, files map[string]string) string {
		t.Helper()
		dir := t.TempDir()
		for name, body := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
		}
		return dir
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		dir := write(t, map[string]string{
			"cairn.yaml": minimalYAML + "tasking: {x: 1}\n",
		})
		c, warnings, err := LoadConfig(filepath.Join(dir, "cairn.yaml"))
		require.NoError(t, err)
		require.Len(t, warnings, 1)
		require.Equal(t, validConfig(), c)
	})

	t.Run("TokensFileMerged", func(t *testing.T) {
		t.Parallel()
		dir := write(t, map[string]string{
			"cairn.yaml": minimalYAML + `
auth:
  tokensFile: tokens.yaml
  tokens: [{name: ci, sha256: ` + testSHA256 + `, scopes: [read]}]
`,
			"tokens.yaml": "- {name: ops, sha256: " + testSHA256 + ", scopes: [admin, read]}\n",
		})
		c, _, err := LoadConfig(filepath.Join(dir, "cairn.yaml"))
		require.NoError(t, err)
		require.Equal(t, filepath.Join(dir, "tokens.yaml"), c.Auth.TokensFile)
		require.Equal(t, []TokenConfig{
			{Name: "ci", SHA256: testSHA256, Scopes: []string{"read"}},
			{Name: "ops", SHA256: testSHA256, Scopes: []string{"admin", "read"}},
		}, c.Auth.Tokens)
	})

	for name, tc := range map[string]struct {
		files map[string]string
		want  string
	}{
		"ErrMissingFile": {map[string]string{}, "read config"},
		"ErrParse":       {map[string]string{"cairn.yaml": minimalYAML + "api: {servce: 1}"}, `unknown key "api.servce"`},
		"ErrInvalid":     {map[string]string{"cairn.yaml": "appName: cairn"}, "artifact.s3.endpoint:"},
		"ErrTokensFileMissing": {map[string]string{
			"cairn.yaml": minimalYAML + "auth: {tokensFile: nope.yaml}",
		}, "auth.tokensFile"},
		"ErrTokensFileUnknownKey": {map[string]string{
			"cairn.yaml": minimalYAML + "auth: {tokensFile: t.yaml}",
			"t.yaml":     "- {nmae: ops}",
		}, `unknown key "auth.tokensFile[0].nmae"`},
		"ErrTokensFileNotList": {map[string]string{
			"cairn.yaml": minimalYAML + "auth: {tokensFile: t.yaml}",
			"t.yaml":     "name: ops",
		}, `key "auth.tokensFile"`},
		"ErrTokensDuplicateAcrossFiles": {map[string]string{
			"cairn.yaml": minimalYAML + "auth: {tokensFile: t.yaml, tokens: [{name: ops, sha256: " + testSHA256 + ", scopes: [read]}]}",
			"t.yaml":     "- {name: ops, sha256: " + testSHA256 + ", scopes: [read]}",
		}, "auth.tokens[1].name"},
		"ErrCAFileRelativeToConfig": {map[string]string{
			"cairn.yaml": minimalYAML + "persistence: {sql: {app: {ssl: {enabled: true, caFile: ca.pem}}}}",
		}, "persistence.sql.app.ssl.caFile"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := write(t, tc.files)
			_, _, err := LoadConfig(filepath.Join(dir, "cairn.yaml"))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestConfigAddresses(t *testing.T) {
	t.Parallel()

	t.Run("URLs", func(t *testing.T) {
		t.Parallel()
		for name, tc := range map[string]struct {
			s3                   S3Config
			endpoint, presignURL string
		}{
			"TLS":          {S3Config{Endpoint: "store:7070", UseTLS: true}, "https://store:7070", "https://store:7070"},
			"NoTLS":        {S3Config{Endpoint: "store:7070"}, "http://store:7070", "http://store:7070"},
			"Presign":      {S3Config{Endpoint: "store:7070", PresignEndpoint: "s3.example:443", UseTLS: true}, "https://store:7070", "https://s3.example:443"},
			"SchemeWins":   {S3Config{Endpoint: "http://store:7070", PresignEndpoint: "https://s3.example/", UseTLS: false}, "http://store:7070", "https://s3.example"},
			"PresignNoTLS": {S3Config{Endpoint: "https://store:7070", PresignEndpoint: "localhost:7070"}, "https://store:7070", "http://localhost:7070"},
		} {
			c := validConfig()
			c.Artifact.S3 = tc.s3
			require.Equal(t, tc.endpoint, c.EndpointURL(), name)
			require.Equal(t, tc.presignURL, c.PresignEndpointURL(), name)
		}
	})

	t.Run("Addrs", func(t *testing.T) {
		t.Parallel()
		c := DefaultConfig()
		require.Equal(t, "0.0.0.0:44123", c.APIAddr())
		require.Equal(t, "0.0.0.0:3001", c.MetricsAddr())
		c.API.Service.ListenOn, c.API.Service.AppPort = "::1", 0
		require.Equal(t, "[::1]:0", c.APIAddr())
	})

	t.Run("Loopback", func(t *testing.T) {
		t.Parallel()
		for name, tc := range map[string]struct {
			api, metrics string
			want         bool
		}{
			"Defaults":      {"0.0.0.0", "0.0.0.0", false},
			"Both":          {"127.0.0.1", "127.0.0.1", true},
			"Localhost":     {"localhost", "::1", true},
			"Loopback8":     {"127.8.0.1", "127.0.0.1", true},
			"MetricsPublic": {"127.0.0.1", "0.0.0.0", false},
			"APIPublic":     {"10.0.0.1", "127.0.0.1", false},
			"IPv6Any":       {"::", "::1", false},
		} {
			c := DefaultConfig()
			c.API.Service.ListenOn, c.Metrics.Service.ListenOn = tc.api, tc.metrics
			require.Equal(t, tc.want, c.Loopback(), name)
		}
	})
}

func TestDatabaseURL(t *testing.T) {
	t.Parallel()
	c := SQLAppConfig{Host: "db", Port: 5432, DB: "cairn", User: "cairn"}
	require.Equal(t, "postgres://cairn:p%40ss@db:5432/cairn", DatabaseURL(c, "p@ss"))

	c.Hosts = []string{"db-a:5432", "[::1]:5433"}
	dsn := DatabaseURL(c, "pw")
	require.Equal(t, "postgres://cairn:pw@db-a:5432,[::1]:5433/cairn?connect_timeout=5&target_session_attrs=read-write", dsn)
	cfg, err := pgconn.ParseConfig(dsn)
	require.NoError(t, err)
	require.Equal(t, "db-a", cfg.Host, "host and port give way to hosts")
	require.Equal(t, "::1", cfg.Fallbacks[len(cfg.Fallbacks)-1].Host)
	require.Equal(t, uint16(5433), cfg.Fallbacks[len(cfg.Fallbacks)-1].Port)
	require.NotNil(t, cfg.ValidateConnect, "a read-only server is passed over")
	require.Equal(t, 5*time.Second, cfg.ConnectTimeout, "a silent host is given up on")

	c.SSL = SSLConfig{true, "/etc/ca.pem"}
	require.Equal(t, "postgres://cairn:pw@db-a:5432,[::1]:5433/cairn?connect_timeout=5&sslmode=verify-full&sslrootcert=%2Fetc%2Fca.pem&target_session_attrs=read-write",
		DatabaseURL(c, "pw"))
}

// TestConfigOAuth reads auth.oauth and holds its values to the rules of
// authorization discovery, with the exact complaints.
func TestConfigOAuth(t *testing.T) {
	t.Parallel()
	c, _, err := ParseConfig([]byte(`
artifact:
  s3: {endpoint: "store.internal:7070"}
  store: {bucket: cairn}
auth:
  oauth:
    resource: https://cairn.example/v1/mcp
    authorizationServers: [https://id.example, https://login.example/tenant-1]
    audience: api://cairn
`))
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	require.Equal(t, OAuthConfig{Resource: "https://cairn.example/v1/mcp",
		AuthorizationServers: []string{"https://id.example", "https://login.example/tenant-1"}, Audience: "api://cairn"}, c.Auth.OAuth)
	require.Equal(t, "api://cairn", c.Auth.OAuth.audience())
	c.Auth.OAuth.Audience = ""
	require.Equal(t, "https://cairn.example/v1/mcp", c.Auth.OAuth.audience(), "the resource by default")
	require.Equal(t, OAuthConfig{}, DefaultConfig().Auth.OAuth, "nothing configured by default")

	c = validConfig()
	c.Auth.OAuth = OAuthConfig{Resource: "cairn.example/v1/mcp",
		AuthorizationServers: []string{"https://id.example?tenant=1", "https://id.example", "https://id.example"},
		Audience:             "cairn\t"}
	require.EqualError(t, c.Validate(), strings.Join([]string{
		`auth.oauth.resource: must be an absolute http(s) URL with a host and no user info, query or fragment, got "cairn.example/v1/mcp"`,
		`auth.oauth.audience: must be 1 to 2048 printable ASCII characters without spaces, got "cairn\t"`,
		`auth.oauth.authorizationServers[0]: must be an absolute http(s) URL with a host and no user info, query or fragment, got "https://id.example?tenant=1"`,
		`auth.oauth.authorizationServers[2]: "https://id.example" is already authorizationServers[1]`,
	}, "\n"))
}
