# Stand-in for python:3.11-slim-bookworm (tests/support/standin.py): Debian bookworm with its own
# Python 3.11 and venv. The public image keeps python3 in /usr/local/bin, this one in /usr/bin;
# deploy/Dockerfile depends on neither (it runs `python3 -m venv` from PATH).
FROM nearrpc-standin/debian:bookworm
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 python3-venv >/dev/null \
 && rm -rf /var/lib/apt/lists/*
CMD ["python3"]
