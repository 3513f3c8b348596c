package cairn_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestDeliveryFilterValidate(t *testing.T) {
	t.Parallel()
	f := cairn.DeliveryFilter{}
	require.NoError(t, f.Validate())
	require.Equal(t, cairn.DefaultDeliveryLimit, f.Limit, "the default page")
	ok := cairn.DeliveryFilter{Webhook: "ops", State: cairn.DeliveryFailed, Limit: cairn.MaxListLimit, After: "01JZ8X3M6Q4W5E7R9T1Y2V3K4P"}
	require.NoError(t, ok.Validate())
	for name, f := range map[string]cairn.DeliveryFilter{
		"UnknownState": {State: "LOST"},
		"BadWebhook":   {Webhook: "a b"},
		"LimitOver":    {Limit: cairn.MaxListLimit + 1},
		"LimitUnder":   {Limit: -1},
		"AfterNoULID":  {After: "01jz8x3m6q4w5e7r9t1y2v3k4p"},
		"AfterWithI":   {After: "01JZ8X3M6Q4W5E7R9T1Y2V3K4I"},
		"AfterShort":   {After: "01JZ8X"},
	} {
		require.Equal(t, cairn.ReasonInvalidQuery, cairn.ErrorReason(f.Validate()), name)
	}
}
