package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-resty/resty/v2"

	"github.com/cairn-dev/cairn"
)

// call is one REST request.
type call struct {
	method string
	path   string     // under the base path, e.g. "/v1/workspaces"
	query  url.Values // optional
	body   any        // JSON-encoded when not nil
	// raw, when not nil, is the body as it is, application/octet-stream.
	raw []byte
	// header holds the call's own request headers (If-Match, …).
	header http.Header
	// idempotent requests are sent again after a connection failure: every
	// GET, the PUTs that set a name, description or volume hint, and the
	// DELETEs that succeed on an absent target (artifact, volume). Never a
	// POST, never PUT content (its staging object is consumed), never a
	// workspace DELETE (a repeat answers 404).
	idempotent bool
	// long requests run sidecars or a sweep on the server.
	long bool
	// ifNoneMatch makes a GET conditional: a 304 answer decodes nothing and
	// sets reply.notModified.
	ifNoneMatch string
	// reply, when not nil, receives what the answer says besides its body.
	reply *reply
}

// reply is what a call learns from an answer's headers.
type reply struct {
	etag        string
	notModified bool
}

// do sends k and decodes the payload of a 2xx envelope into out (nil:
// ignore it). A non-2xx answer is a *cairn.Error.
func (c *Client) do(parent context.Context, k call, out any) error {
	timeout := c.timeout
	if k.long {
		timeout = max(timeout, LongTimeout)
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()

	req := c.rest.R().SetContext(ctx)
	for name, values := range c.header() {
		req.SetHeader(name, values[0])
	}
	if k.body != nil {
		req.SetHeader("Content-Type", "application/json").SetBody(k.body)
	}
	if k.raw != nil {
		req.SetHeader("Content-Type", "application/octet-stream").SetBody(k.raw)
	}
	for name, values := range k.header {
		req.SetHeader(name, values[0])
	}
	if k.ifNoneMatch != "" {
		req.SetHeader("If-None-Match", k.ifNoneMatch)
	}
	if k.idempotent {
		req.AddRetryCondition(func(_ *resty.Response, err error) bool { return retryable(err) })
	}
	target := c.base.String() + k.path
	if len(k.query) > 0 {
		target += "?" + k.query.Encode()
	}
	what := k.method + " " + k.path
	resp, err := req.Execute(k.method, target)
	switch {
	case err != nil && parent.Err() == nil && ctx.Err() != nil:
		return &unreachableError{what: what, err: fmt.Errorf("no answer within %s", timeout)}
	case errors.Is(err, resty.ErrResponseBodyTooLarge):
		return &cairn.Error{Reason: cairn.ReasonInternal,
			Detail: fmt.Sprintf("%s: the answer is larger than %d bytes", what, maxResponseBytes), Err: err}
	case err != nil:
		return transportError(parent, what, err)
	}
	if k.reply != nil {
		k.reply.etag = resp.Header().Get("ETag")
		k.reply.notModified = k.ifNoneMatch != "" && resp.StatusCode() == http.StatusNotModified
		if k.reply.notModified {
			return nil
		}
	}
	if resp.StatusCode() < 200 || resp.StatusCode() > 299 {
		return errorFrom(resp.StatusCode(), resp.Header(), resp.Body())
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*rawAnswer); ok {
		raw.header, raw.body = resp.Header(), resp.Body()
		return nil
	}
	if err := json.Unmarshal(resp.Body(), out); err != nil {
		return &cairn.Error{Reason: cairn.ReasonInternal, Status: resp.StatusCode(),
			Detail: fmt.Sprintf("%s: the server's answer is not the expected JSON", what), Err: err}
	}
	return nil
}

// rawAnswer, passed as do's out, receives a 2xx answer's body and headers
// as they are: for the routes whose payload is not JSON.
type rawAnswer struct {
	header http.Header
	body   []byte
}

// get is an idempotent GET.
func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, call{method: http.MethodGet, path: path, query: query, idempotent: true}, out)
}

// pathOf joins escaped path segments under the API root, so that an ID
// holding a '/' or '?' stays one segment.
func pathOf(segments ...string) string {
	p := "/v1"
	for _, s := range segments {
		p += "/" + url.PathEscape(s)
	}
	return p
}
