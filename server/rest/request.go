package rest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn"
)

// maxBodyBytes bounds every JSON request body.
const maxBodyBytes = 1 << 20

// decodeJSON reads the body into v. Unknown fields are ignored (the first
// cairn did so); an empty body is invalid_json; past 1 MiB, body_too_large.
func decodeJSON(r *http.Request, v any) error {
	err := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBodyBytes)).Decode(v)
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return &cairn.Error{Reason: cairn.ReasonBodyTooLarge,
			Detail: "the request body is larger than 1 MiB", Err: err}
	}
	if errors.Is(err, io.EOF) {
		return &cairn.Error{Reason: cairn.ReasonInvalidJSON, Detail: "the request body is empty", Err: err}
	}
	return &cairn.Error{Reason: cairn.ReasonInvalidJSON, Detail: jsonProblem(err), Err: err}
}

// jsonProblem names what was wrong without echoing the body back.
func jsonProblem(err error) string {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return "field '" + te.Field + "' must be a JSON " + te.Type.Kind().String()
	}
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return "the request body is not valid JSON (at byte " + strconv.FormatInt(se.Offset, 10) + ")"
	}
	return "the request body is not valid JSON"
}

// queryError is a malformed query parameter; its message is the route's
// answer as well.
func queryError(message string) error {
	return failed(cairn.Errorf(cairn.ReasonInvalidQuery, "%s", message), "%s", message)
}

// page reads 'offset' and 'limit'.
func page(q url.Values) (cairn.Page, error) {
	var p cairn.Page
	var err error
	if p.Offset, err = intParam(q, "offset"); err != nil {
		return p, err
	}
	if p.Limit, err = intParam(q, "limit"); err != nil {
		return p, err
	}
	if p.Offset < 0 {
		return p, queryError("Query parameter 'offset' must be 0 or more")
	}
	if q.Has("limit") && (p.Limit < 1 || p.Limit > cairn.MaxListLimit) {
		return p, queryError("Query parameter 'limit' must be between 1 and 1000")
	}
	return p, nil
}

func intParam(q url.Values, name string) (int, error) {
	if !q.Has(name) {
		return 0, nil
	}
	n, err := strconv.Atoi(q.Get(name))
	if err != nil {
		return 0, queryError("Query parameter '" + name + "' must be an integer")
	}
	return n, nil
}

// requiredName reads the 'name' query parameter of the rename routes.
func requiredName(q url.Values) (string, error) {
	name := q.Get("name")
	if name == "" {
		return "", queryError("Query parameter 'name' is required")
	}
	return name, nil
}

// isValidation reports failures of the request's own content, which routes
// answer with their "parameters not valid" sentence.
func isValidation(err error) bool {
	switch cairn.ErrorReason(err) {
	case cairn.ReasonInvalidName, cairn.ReasonInvalidParameters, cairn.ReasonInvalidChecksum:
		return true
	}
	return false
}
