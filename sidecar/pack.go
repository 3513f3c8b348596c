package sidecar

import "io"

// pack packs a directory (placeholder until it is built).
func pack(env Env, in io.Reader, out io.Writer) Result {
	return Failure(ReasonEnvInvalid, "pack is not built yet")
}
