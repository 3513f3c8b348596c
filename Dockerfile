# The cairn server image: the static binary that `make build` puts in bin/,
# on scratch, with the host's CA bundle for TLS to Postgres and the store.
# Built with `make images`; no base image is pulled.
FROM scratch
COPY bin/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY bin/cairn /cairn
ENTRYPOINT ["/cairn"]
CMD ["server"]
