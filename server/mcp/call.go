package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/cairn-dev/cairn"
)

// toolbox holds what every tool handler needs.
type toolbox struct {
	svc     Services
	log     *slog.Logger
	level   slog.Level
	timeout time.Duration
}

// arguments is a tool's decoded input. check re-validates what the schema
// leaves to prose: the name rule (invalid_name), then limits and lengths
// (invalid_parameters, through badParameters).
type arguments interface {
	check(tool string) error
}

// handler is one tool's logic, run on arguments that passed the schema and
// their own check.
type handler[A arguments] func(ctx context.Context, args A) (*mcpgo.CallToolResult, error)

// serve binds a definition to its handler in the manner of mcp-go's typed
// handlers: the arguments are checked against the published schema and
// decoded into A, A checks itself, then h runs under the call deadline. Any
// failure becomes an isError result reading "<reason>: <detail>". Each call
// is logged once: at the configured level, or at error level when it fails.
func serve[A arguments](t *toolbox, d definition, h handler[A]) mcpserver.ServerTool {
	return mcpserver.ServerTool{
		Tool: d.tool(),
		Handler: func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			ctx, cancel := context.WithTimeout(ctx, t.timeout)
			defer cancel()
			ctx = t.withProgress(ctx, req)
			start := time.Now()
			res, err := run(ctx, d, req, h)
			t.logCall(ctx, d.name, req, time.Since(start), err)
			if err != nil {
				return failure(err), nil
			}
			return res, nil
		},
	}
}

func run[A arguments](ctx context.Context, d definition, req mcpgo.CallToolRequest, h handler[A]) (*mcpgo.CallToolResult, error) {
	if !cairn.ScopeAllowed(ctx, d.scope) {
		return nil, cairn.Errorf(cairn.ReasonForbidden, "token '%s' lacks scope '%s'", deref(cairn.ActorFrom(ctx)), d.scope)
	}
	data, err := decodeArguments(d.params, req.GetRawArguments())
	if err != nil {
		return nil, err
	}
	var args A
	if err := json.Unmarshal(data, &args); err != nil {
		// The schema check guarantees the shape; this is a bug of ours.
		return nil, cairn.Internal("the arguments could not be decoded", err)
	}
	if err := args.check(d.name); err != nil {
		return nil, err
	}
	return h(ctx, args)
}

// withProgress passes the progress of the call's long work on to the
// client as notifications/progress on the call's own stream, when the
// client sent a progress token; a notification that cannot be sent (the
// client left) is dropped, as the call ends with its context.
func (t *toolbox) withProgress(ctx context.Context, req mcpgo.CallToolRequest) context.Context {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return ctx
	}
	srv := mcpserver.ServerFromContext(ctx)
	if srv == nil {
		return ctx
	}
	token := req.Params.Meta.ProgressToken
	var tally progressTally
	return cairn.WithProgress(ctx, func(done, total int64) {
		progress, total := tally.next(done, total)
		note := map[string]any{"progressToken": token, "progress": progress}
		if total > 0 {
			note["total"] = total
		}
		if err := srv.SendNotificationToClient(ctx, string(mcpgo.MethodNotificationProgress), note); err != nil {
			t.log.DebugContext(ctx, "progress not sent", "err", err)
		}
	})
}

// progressTally turns the reports of the transfers one call runs one after
// the other (a fork: a snapshot, then a restore), each counting from 0
// towards a total of its own, into one progress that only grows: a report
// that goes back, or names another total, starts the next transfer, which
// counts on from where the last one ended.
type progressTally struct {
	base, last, lastTotal int64
}

// next returns the call's progress and total (0: unknown) for a report.
func (p *progressTally) next(done, total int64) (progress, callTotal int64) {
	if done < p.last || (total != p.lastTotal && p.last > 0) {
		p.base += p.last
	}
	p.last, p.lastTotal = done, total
	if total > 0 {
		callTotal = p.base + total
	}
	return p.base + done, callTotal
}

// failure is the tool result of a failed call. Only the reason and the
// client-safe detail travel; the cause stays in the log.
func failure(err error) *mcpgo.CallToolResult {
	return mcpgo.NewToolResultError(failureText(err))
}

// failureText is how a failure reads to an agent: "<reason>: <detail>".
func failureText(err error) string {
	return fmt.Sprintf("%s: %s", cairn.ErrorReason(err), cairn.ErrorDetail(err))
}

func (t *toolbox) logCall(ctx context.Context, tool string, req mcpgo.CallToolRequest, took time.Duration, err error) {
	t.logOutcome(ctx, "mcp tool call", err, slog.String("tool", tool),
		slog.String("arguments", string(mustJSON(req.GetRawArguments()))), slog.Duration("duration", took))
}

// logOutcome logs one request's end: at the configured level when it
// succeeded, at debug level when the client hung up, else at error level.
func (t *toolbox) logOutcome(ctx context.Context, what string, err error, attrs ...slog.Attr) {
	if err == nil {
		t.log.LogAttrs(ctx, t.level, what, attrs...)
		return
	}
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		// The client hung up: no server failure, nobody to answer.
		t.log.LogAttrs(ctx, slog.LevelDebug, "mcp client gone", append(attrs, slog.String("reason", string(cairn.ReasonClientGone)))...)
		return
	}
	attrs = append(attrs, slog.String("reason", string(cairn.ErrorReason(err))), slog.Any("err", err))
	t.log.LogAttrs(ctx, slog.LevelError, what+" failed", attrs...)
}

// structured is the result of a read tool: v as structuredContent, and the
// same JSON as the one text item.
func structured(v any) (*mcpgo.CallToolResult, error) {
	return mcpgo.NewToolResultStructured(v, string(mustJSON(v))), nil
}

// changed is the result of a tool that changes artifacts or files: v as
// structuredContent, and one sentence for clients that read text only.
func changed(v any, format string, args ...any) (*mcpgo.CallToolResult, error) {
	return mcpgo.NewToolResultStructured(v, fmt.Sprintf(format, args...)), nil
}

// linked is the result of a tool that stores an artifact: as changed, with
// a resource_link to the artifact after the sentence.
func linked(v any, link mcpgo.ResourceLink, format string, args ...any) (*mcpgo.CallToolResult, error) {
	res := mcpgo.NewToolResultStructured(v, fmt.Sprintf(format, args...))
	res.Content = append(res.Content, link)
	return res, nil
}

// badParameters is the invalid_parameters answer to an argument that the
// schema accepts but a limit refuses.
func badParameters(tool, format string, args ...any) error {
	return cairn.Errorf(cairn.ReasonInvalidParameters, "%s parameters are not valid: %s", tool, fmt.Sprintf(format, args...))
}

// checkPage checks the paging arguments of the list tools.
func checkPage(tool string, limit, offset *int) error {
	if err := checkLimit(tool, limit, cairn.MaxListLimit); err != nil {
		return err
	}
	if offset != nil && *offset < 0 {
		return badParameters(tool, "'offset' must be 0 or more")
	}
	return nil
}

// checkLimit checks an optional limit against 1 … most.
func checkLimit(tool string, limit *int, most int) error {
	if limit != nil && (*limit < 1 || *limit > most) {
		return badParameters(tool, "'limit' must be between 1 and %d", most)
	}
	return nil
}

// checkNames applies the name rule to each name in turn.
func checkNames(kind string, names ...string) error {
	for _, n := range names {
		if err := cairn.ValidateName(kind, n); err != nil {
			return err
		}
	}
	return nil
}

// page turns the paging arguments into the service's page; absent limit
// means every row, which the service bounds.
func page(limit, offset *int) cairn.Page {
	return cairn.Page{Limit: deref0(limit), Offset: deref0(offset)}
}

// deref0 is an optional integer, 0 (the service's default) when absent.
func deref0(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
