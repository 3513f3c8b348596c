package cairn

// APIVersion is the REST API's version, the prefix of its paths.
const APIVersion = "v1"

// Info is what a server offers, answered by GET /v1/info to any valid
// token: a client sizes its requests by Bounds and checks Features before
// it relies on one, instead of guessing from errors.
type Info struct {
	Version    string       `json:"version"`
	APIVersion string       `json:"api_version"`
	Scopes     []string     `json:"scopes"` // the caller's; every scope with authentication off
	Bounds     InfoBounds   `json:"bounds"`
	Features   InfoFeatures `json:"features"`
}

// InfoBounds are the limits a request is held to.
type InfoBounds struct {
	MaxBodyBytes       int64 `json:"max_body_bytes"`      // a JSON request body
	MaxObjectSize      int64 `json:"max_object_size"`     // an artifact
	SinglePutMax       int64 `json:"single_put_max"`      // one PUT of a staging upload
	MultipartThreshold int64 `json:"multipart_threshold"` // above it a multipart mint gets a plan
	PartSize           int64 `json:"part_size"`           // a planned part
	PartsPerRequest    int   `json:"parts_per_request"`   // part URLs minted at once
	ListLimit          int   `json:"list_limit"`          // a page of a list
	PutURLTTLSecs      int   `json:"put_url_ttl_secs"`
	GetURLMaxTTLSecs   int   `json:"get_url_max_ttl_secs"`
	FileReadMaxBytes   int64 `json:"file_read_max_bytes"` // one read of a volume file
	UnpackMaxEntries   int   `json:"unpack_max_entries"`
	UnpackMaxBytes     int64 `json:"unpack_max_bytes"`
	UnpackMaxRatio     int   `json:"unpack_max_ratio"`
	FileWriteMaxBytes  int64 `json:"file_write_max_bytes"` // one file write's body
}

// InfoFeatures says which parts of the API this server serves.
type InfoFeatures struct {
	Runtime string `json:"runtime"` // "docker" or "kubernetes"
	Shell   bool   `json:"shell"`   // shells and execs
	SSH     bool   `json:"ssh"`     // the SSH workbench
	MCP     bool   `json:"mcp"`
	// Integrity is who checks uploaded bytes: "store" or "server"
	// (artifact.s3.verify).
	Integrity string `json:"integrity"`
	// StreamUploads: a "stream" mint is served (the store, or the server,
	// hashes what a PUT carries).
	StreamUploads bool `json:"stream_uploads"`
	// FilesWrite: workspace files are written, removed, made and moved
	// through the API, and searched. Watch: the events stream carries a
	// workspace's file changes (files=PATH).
	FilesWrite bool `json:"files_write"`
	Watch      bool `json:"watch"`
}
