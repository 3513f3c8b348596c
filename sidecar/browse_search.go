package sidecar

// search and tree are written next; until then they refuse.
func (b *browser) search(req BrowseRequest) BrowseReply {
	return refusal(fail(ReasonEnvInvalid, "op %q is not served yet", req.Op))
}

func (b *browser) tree(req BrowseRequest) BrowseReply {
	return refusal(fail(ReasonEnvInvalid, "op %q is not served yet", req.Op))
}
