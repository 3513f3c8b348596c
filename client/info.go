package client

import (
	"context"

	"github.com/cairn-dev/cairn"
)

// Info asks the server what it offers: its version, the bounds requests
// are held to, which features it serves, and the scopes of this client's
// token. Any valid token may ask.
func (c *Client) Info(ctx context.Context) (*cairn.Info, error) {
	var out struct {
		Info *cairn.Info `json:"info"`
	}
	if err := c.get(ctx, pathOf("info"), nil, &out); err != nil {
		return nil, err
	}
	return out.Info, nil
}
