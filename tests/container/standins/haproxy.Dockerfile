# Stand-in for haproxy:2.6-bookworm (tests/support/standin.py): Debian bookworm's HAProxy 2.6,
# reading its configuration where the public image does and running in the foreground as it does.
FROM nearrpc-standin/debian:bookworm
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy >/dev/null \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /usr/local/etc/haproxy
USER haproxy
STOPSIGNAL SIGUSR1
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
