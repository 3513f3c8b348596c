package sidecar

import "io"

// serve is the browse container's loop (placeholder until it is built).
func serve(env Env, in io.Reader, out io.Writer) int {
	return emit(out, Failure(ReasonEnvInvalid, "serve is not built yet"), ExitUsage)
}
