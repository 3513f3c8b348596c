package kube

import (
	"context"
	"errors"
	"net"

	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/server/service"
)

// PENDING: replaced by the kube holder work before this lands.
func (s *Shells) StartHolder(context.Context, service.ShellSpec, holder.Config, []byte) (string, error) {
	return "", errors.New("pending")
}

func (s *Shells) DialHolder(context.Context, string) (net.Conn, error) {
	return nil, errors.New("pending")
}
