package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// seaweedDataDir holds the master's metadata, the volumes and the filer's
// store.
const seaweedDataDir = "weed"

// seaweedPortFlags name the ports `weed server` needs besides the S3 one,
// each kept in a file of its own (port-FLAG) so a restart reuses it: the
// master records the volume server by address.
var seaweedPortFlags = []string{"master.port", "master.port.grpc", "volume.port", "volume.port.grpc",
	"filer.port", "filer.port.grpc", "s3.port.grpc"}

// seaweedCommand runs master, volume server, filer and S3 gateway in one
// process. Everything but the S3 gateway listens on loopback; nothing is
// served that cairn does not use (no Iceberg, Lance, metrics or admin
// listeners) and nothing is reported off this machine (telemetry off).
func (s *S3) seaweedCommand(ctx context.Context) (*exec.Cmd, error) {
	data := filepath.Join(s.Dir, seaweedDataDir)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("s3 dir: %w", err)
	}
	host, port, err := net.SplitHostPort(s.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("s3 endpoint: %w", err)
	}
	args := []string{"server",
		"-dir=" + data, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-filer", "-s3", "-s3.ip.bind=" + host, "-s3.port=" + port,
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-s3.iam=false",
		"-master.telemetry=false",
		// A resumed raft state makes the lone master wait out an election
		// (10 s) after every restart; the topology is rebuilt from the
		// volume server's heartbeat either way.
		"-master.resumeState=false",
		// Each bucket is a collection with volumes of its own: small volumes
		// and no fixed count keep many short-lived test buckets from
		// exhausting the volume slots.
		"-master.volumeSizeLimitMB=64", "-volume.max=0",
		// A volume server waits 10 s after its last heartbeat by default,
		// for a load balancer to notice; there is none here.
		"-volume.preStopSeconds=0",
		"-filer.localSocket=" + filepath.Join(s.Dir, "filer.sock"),
		"-s3.localSocket=" + filepath.Join(s.Dir, "s3.sock"),
	}
	for _, flag := range seaweedPortFlags {
		p, err := choosePort(filepath.Join(s.Dir, "port-"+flag))
		if err != nil {
			return nil, fmt.Errorf("seaweedfs %s: %w", flag, err)
		}
		args = append(args, "-"+flag+"="+strconv.Itoa(p))
		if flag == "master.port" {
			s.master = "http://127.0.0.1:" + strconv.Itoa(p)
		}
	}
	// The store outlives this call: Stop ends it, not ctx.
	cmd := exec.CommandContext(context.WithoutCancel(ctx), s.bin, args...)
	// Keys go in the environment, not argv: the gateway makes them its one
	// admin identity.
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+s.AccessKey, "AWS_SECRET_ACCESS_KEY="+s.SecretKey)
	return cmd, nil
}

// seaweedVolumesUp reports whether the master knows a volume server: the S3
// gateway answers listings before that, but cannot read or write objects.
func (s *S3) seaweedVolumesUp(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.master+"/dir/status", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st struct {
		Topology struct {
			DataCenters []struct {
				Racks []struct {
					DataNodes []json.RawMessage
				}
			}
		}
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&st); err != nil {
		return fmt.Errorf("seaweedfs master status: %w", err)
	}
	for _, dc := range st.Topology.DataCenters {
		for _, rack := range dc.Racks {
			if len(rack.DataNodes) > 0 {
				return nil
			}
		}
	}
	return errors.New("seaweedfs: no volume server has joined the master yet")
}
