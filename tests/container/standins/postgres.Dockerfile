# Stand-in for postgres:15-bookworm (tests/support/standin.py): Debian bookworm's PostgreSQL 15
# with an entrypoint that does what the public image's documents: on an empty data folder,
# initdb with POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB while a first server listens on
# its local socket only (network connections are refused until the real server starts), then
# the real server on all addresses.
FROM nearrpc-standin/debian:bookworm
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql-15 >/dev/null \
 && rm -rf /var/lib/apt/lists/* && install -d -o postgres -g postgres /var/lib/postgresql/data /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
