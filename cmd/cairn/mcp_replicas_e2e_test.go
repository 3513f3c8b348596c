package main

import (
	"fmt"
	"testing"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestMCPCancelAcrossReplicas runs two servers of one database, bucket and
// Docker engine, as replicas behind a load balancer: an agent's
// upload_artifact runs on the first and its notifications/cancelled reaches
// the second. The upload stops half-way and leaves no artifact, no object
// and no container.
func TestMCPCancelAcrossReplicas(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{mcp: true})
	b := st.start(t, shellServerOpts{mcp: true})
	ws := a.readyWorkspace(t)
	stacktest.RunInVolume(t, st.app, ws.VolumeName, fmt.Sprintf("head -c %d /dev/urandom > /mnt/cairn/ws/big", 512<<20))
	before := stacktest.ObjectKeys(t, st.gw, st.bucket)

	cancelled := stacktest.CancelMCPCallHalfWay(t, a.url+"/v1/mcp", b.url+"/v1/mcp", shellAdminToken, "upload_artifact",
		map[string]any{"workspace_name": ws.Name, "source_path": "/mnt/cairn/ws/big", "artifact_name": "big"})
	stacktest.RequireCancelLeftNothing(t, a.admin, st.app, ws.ID, st.gw, st.bucket, before, cancelled)
}
