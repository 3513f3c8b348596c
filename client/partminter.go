package client

import (
	"context"
	"fmt"

	"github.com/cairn-dev/cairn"
)

// partMinter mints the part URLs of one upload for its workers. A worker
// asks once it has hashed its part, right before the PUT, since part URLs
// expire within minutes; the workers that ask while a request is out are
// answered by the next one, so the server is asked once per batch, not
// once per part.
type partMinter struct {
	c    *Client
	st   *uploadState
	reqs chan mintRequest // unbuffered: a waiting worker is a waiting sender
}

type mintRequest struct {
	spec  cairn.PartSpec
	reply chan mintReply // buffered, so that run never blocks on it
}

type mintReply struct {
	url string
	err error
}

// run answers requests until ctx ends.
func (m *partMinter) run(ctx context.Context) {
	for {
		select {
		case r := <-m.reqs:
			m.mint(ctx, m.gather(r))
		case <-ctx.Done():
			return
		}
	}
}

// gather is first and every request already waiting, up to a batch.
func (m *partMinter) gather(first mintRequest) []mintRequest {
	batch := []mintRequest{first}
	for len(batch) < cairn.MaxPartBatch {
		select {
		case r := <-m.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// mint asks the server for the batch's URLs and answers each request.
func (m *partMinter) mint(ctx context.Context, batch []mintRequest) {
	specs := make([]cairn.PartSpec, len(batch))
	for i, r := range batch {
		specs[i] = r.spec
	}
	out, err := m.c.MintParts(ctx, m.st.WorkspaceID, cairn.PartRequest{StagingKey: m.st.Key, UploadID: m.st.UploadID, Parts: specs})
	urls := map[int]string{}
	if err == nil {
		for _, p := range out.Parts {
			urls[p.Number] = p.PutURL
		}
	}
	for _, r := range batch {
		reply := mintReply{url: urls[r.spec.Number], err: err}
		if err == nil && reply.url == "" {
			reply.err = fmt.Errorf("the server minted no URL for part %d", r.spec.Number)
		}
		r.reply <- reply
	}
}

// url returns a URL for the part, bound to its size and digest.
func (m *partMinter) url(ctx context.Context, spec cairn.PartSpec) (string, error) {
	r := mintRequest{spec: spec, reply: make(chan mintReply, 1)}
	select {
	case m.reqs <- r:
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	select {
	case rep := <-r.reply:
		return rep.url, rep.err
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
}
