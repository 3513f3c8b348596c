package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// newWebhooksCommand is `cairn webhooks`: the deliveries to the
// configured webhooks, newest first.
func newWebhooksCommand(c *cli) *cobra.Command {
	var f cairn.DeliveryFilter
	cmd := &cobra.Command{
		Use:   "webhooks [--webhook W] [--state S] [--limit N] | retry ID",
		Short: "List webhook deliveries, newest first (admin)",
		Long: `webhooks lists the deliveries of events to the server's webhooks, newest
first: pending ones with their next attempt, delivered ones (kept a day) and
failed ones (kept seven days) with the receiver's last answer. --state FAILED
shows what did not get through.`,
		Args: usage(cobra.NoArgs),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, _ []string) error {
			f.State = strings.ToUpper(f.State)
			if err := f.Validate(); err != nil {
				return usagef("%s", cairn.ErrorDetail(err))
			}
			page, err := cl.WebhookDeliveries(cmd.Context(), f)
			if err != nil {
				return err
			}
			return c.emit(deliveriesView(page))
		}),
	}
	cmd.Flags().StringVar(&f.Webhook, "webhook", "", "only deliveries to this webhook")
	cmd.Flags().StringVar(&f.State, "state", "", "only PENDING, DELIVERED or FAILED deliveries")
	cmd.Flags().IntVar(&f.Limit, "limit", cairn.DefaultDeliveryLimit, "at most this many (1 to 1000)")
	cmd.AddCommand(newWebhookRetryCommand(c))
	return cmd
}

// newWebhookRetryCommand is `cairn webhooks retry ID`.
func newWebhookRetryCommand(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "retry ID",
		Short: "Send a failed webhook delivery again, its attempts counted afresh (admin)",
		Args:  usage(cobra.ExactArgs(1)),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			d, err := cl.RetryWebhookDelivery(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			v := deliveriesView(&cairn.DeliveryPage{Deliveries: []cairn.WebhookDelivery{*d}})
			v.payload = struct {
				Delivery *cairn.WebhookDelivery `json:"delivery"`
			}{d}
			return c.emit(v)
		}),
	}
}

func deliveriesView(page *cairn.DeliveryPage) view {
	v := view{payload: page}
	now := time.Now()
	t := table{headers: []string{"AGE", "WEBHOOK", "EVENT", "STATE", "TRIES", "LAST"}, flex: 5}
	for _, d := range page.Deliveries {
		v.names = append(v.names, d.ID)
		last := "-"
		switch {
		case d.LastError != nil:
			last = termkit.Sanitize(*d.LastError)
		case d.LastStatus != nil:
			last = strconv.Itoa(*d.LastStatus)
		}
		t.rows = append(t.rows, []string{termkit.Age(now, d.CreatedAt), termkit.Sanitize(d.Webhook),
			string(d.EventType), d.State, strconv.Itoa(d.Attempts), last})
	}
	v.table = t.write
	return v
}
