package client

import (
	"context"
	"iter"
	"maps"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn"
)

// pageSize is what a transparent list asks for at once: the server's
// maximum page.
const pageSize = cairn.MaxListLimit

// pages yields the rows of a paged list route. With p.Limit zero it asks
// for pageSize rows at a time from p.Offset on, until a short page; else it
// asks for the one page p names. items picks the rows out of an answer.
// Offset paging of a list ordered by (created_at, id) sees rows created
// meanwhile at its end; a row deleted meanwhile may shift another out of
// view for that walk.
func pages[P, T any](ctx context.Context, c *Client, path string, q url.Values, p cairn.Page,
	items func(*P) []T) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		all, offset := p.Limit == 0, p.Offset
		for {
			limit := p.Limit
			if all {
				limit = pageSize
			}
			query := maps.Clone(q)
			if query == nil {
				query = url.Values{}
			}
			query.Set("offset", strconv.Itoa(offset))
			query.Set("limit", strconv.Itoa(limit))
			var answer P
			if err := c.get(ctx, path, query, &answer); err != nil {
				yield(zero, err)
				return
			}
			rows := items(&answer)
			for _, row := range rows {
				if !yield(row, nil) {
					return
				}
			}
			if !all || len(rows) < limit {
				return
			}
			offset += len(rows)
		}
	}
}

// collect drains seq into a slice, stopping at its first error.
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	var out []T
	for row, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, nil
}
