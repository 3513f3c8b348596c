package termkit

// Plural is one when n is 1, else many: "1 artifact", "2 artifacts".
func Plural[N int | int64](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
