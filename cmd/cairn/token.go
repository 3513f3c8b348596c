package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
)

// tokenBytes is the entropy of a minted token.
const tokenBytes = 32

// tokenScopes are the scopes a token may carry.
var tokenScopes = []string{"read", "write", "admin", "shell", "mcp"}

func newTokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage API bearer tokens",
		Args:  cobra.NoArgs,
	}
	var name, scopes string
	mint := &cobra.Command{
		Use:   "new",
		Short: "Print a fresh bearer token and its auth.tokens config entry",
		Long: "Prints a fresh random token on the first line, then the YAML entry to add under auth.tokens.\n" +
			"The server keeps only the token's SHA-256; the token itself is shown this once.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return mintToken(cmd.OutOrStdout(), rand.Reader, name, scopes)
		},
	}
	mint.Flags().StringVar(&name, "name", "", "token name, recorded as the actor in the audit trail (required)")
	mint.Flags().StringVar(&scopes, "scopes", "", "comma-separated scopes: read, write, admin, shell, mcp (required)")
	cmd.AddCommand(mint)
	return cmd
}

// mintToken writes a token of tokenBytes random bytes (URL-safe base64,
// unpadded) and its auth.tokens entry.
func mintToken(w io.Writer, random io.Reader, name, scopeList string) error {
	if err := cairn.ValidateName("token", name); err != nil {
		return fmt.Errorf("--name: %s", cairn.ErrorDetail(err))
	}
	var scopes []string
	for s := range strings.SplitSeq(scopeList, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(tokenScopes, s) {
			return fmt.Errorf("--scopes: unknown scope %q; want read, write, admin, shell or mcp", s)
		}
		if !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) == 0 {
		return fmt.Errorf("--scopes: at least one scope is required (read, write, admin, shell, mcp)")
	}
	token, err := newToken(random)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n\n# Add under auth.tokens (the server keeps only the hash; the token is shown once):\n"+
		"- name: %s\n  sha256: %s\n  scopes: [%s]\n", token, name, tokenHash(token), strings.Join(scopes, ", "))
	return err
}

// newToken returns tokenBytes random bytes as unpadded URL-safe base64.
func newToken(random io.Reader) (string, error) {
	raw := make([]byte, tokenBytes)
	if _, err := io.ReadFull(random, raw); err != nil {
		return "", fmt.Errorf("read random bytes: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// tokenHash is what the config keeps of a token: its SHA-256, in hex.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
