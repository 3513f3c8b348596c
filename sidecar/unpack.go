package sidecar

// unpack unpacks an archive (placeholder until it is built).
func unpack(env Env) Result {
	return Failure(ReasonEnvInvalid, "unpack is not built yet")
}
