package stacktest

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// LoseObject deletes the object at key straight from the server's store,
// as an outage or an operator would, and backdates the artifact's content
// so that the maintainer's grace is over: its next pass flags the artifact
// MISSING_OBJECT.
func (s *Server) LoseObject(t testing.TB, artifactID, key string) {
	t.Helper()
	_, err := s.S3.Client().DeleteObject(t.Context(), &awss3.DeleteObjectInput{
		Bucket: aws.String(s.Bucket), Key: aws.String(key)})
	require.NoError(t, err)
	conn, err := pgx.Connect(t.Context(), s.Database)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), `UPDATE artifacts SET content_written_at = now() - interval '1 day' WHERE id = $1`, artifactID)
	require.NoError(t, err)
}
