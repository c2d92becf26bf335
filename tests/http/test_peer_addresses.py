"""The peer address a connection counts against for its share of the cap (`peer_of`): one host
is one address, so an IPv6 host cannot take a new share with each address of its /64, nor an
IPv4 client reaching a dual-stack listener count apart from itself."""

from __future__ import annotations

import pytest

from nearrpc.http.connections import address_share, peer_of


@pytest.mark.parametrize(
    ("peername", "peer"),
    [
        (("10.0.0.7", 40000), "10.0.0.7"),
        (("2001:db8:1:2::1", 40000, 0, 0), "2001:db8:1:2::/64"),
        (("2001:db8:1:2:ffff:ffff:ffff:fffe", 40001, 0, 0), "2001:db8:1:2::/64"),  # the same /64
        (("2001:db8:1:3::1", 40000, 0, 0), "2001:db8:1:3::/64"),  # the next /64: another peer
        (("::ffff:10.0.0.7", 40000, 0, 0), "10.0.0.7"),  # IPv4 through a dual-stack listener
        (("fe80::1%eth0", 40000, 0, 2), "fe80::/64"),
        ("", ""),  # a Unix socket
        (None, ""),
    ],
)
def test_a_peer_is_its_ipv4_address_or_its_ipv6_64(peername: object, peer: str) -> None:
    assert peer_of(peername) == peer


def test_the_default_share_is_half_the_cap_and_at_least_one() -> None:
    assert [address_share(cap) for cap in (1, 2, 3, 50, 768)] == [1, 1, 1, 25, 384]
