#!/bin/sh
# The secrets of the local stack (compose's one-shot `secrets` service): the passwords of the Redis
# ACL users, the gateway's token secret and the workers' state key.
#   secrets.sh DIR                    create DIR/<name> for each secret whose file is missing or empty
#   secrets.sh DIR --rotate NAME...   replace the named secrets (then restart Redis and their readers)
# Names: admin, worker, producer, viewer, gateway (Redis users), gateway-jwt (the HS256 secret that
# `iui gateway` checks bearer tokens with and `iui token` signs them with) and state-key (the key of
# the seal every worker puts on the generations it stores, IUI_STATE_KEY).  A secret is 32 random
# bytes as 64 hex digits (URL-safe).  Existing files are kept, so the secrets survive restarts;
# their owner and mode are set again on every run: `worker`, `gateway`, `gateway-jwt`, `state-key` root:10001
# 0440 (read by the iui image's group), the others root:root 0400 (read by Redis, which starts as
# root).  Only the names are printed, never a secret.
set -eu
umask 077
USERS="admin worker producer viewer gateway"
NAMES="$USERS gateway-jwt state-key"
IUI_GID=10001

usage() {
    echo "usage: secrets.sh DIR [--rotate NAME...]  (names: $NAMES)" >&2
    exit 2
}

known() {
    for name in $NAMES; do [ "$name" = "$1" ] && return 0; done
    return 1
}

generate() {  # generate NAME: a new secret, written whole (a temporary file renamed over the old one)
    tmp="$dir/.$1.tmp"
    rm -f "$tmp"
    head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' > "$tmp"
    if [ "$(wc -c < "$tmp" | tr -d ' ')" != 64 ]; then
        rm -f "$tmp"
        echo "secrets.sh: could not generate $1" >&2
        exit 1
    fi
    mv -f "$tmp" "$dir/$1"
    case "$1" in
        gateway-jwt) echo "secrets.sh: generated the JWT secret $1" ;;
        state-key) echo "secrets.sh: generated the state key $1" ;;
        *) echo "secrets.sh: generated the password of $1" ;;
    esac
}

protect() {  # protect NAME: owner and mode of its file
    case "$1" in
        worker|gateway|gateway-jwt|state-key) chown "0:$IUI_GID" "$dir/$1" && chmod 0440 "$dir/$1" ;;
        *) chown 0:0 "$dir/$1" && chmod 0400 "$dir/$1" ;;
    esac
}

[ $# -ge 1 ] || usage
dir=$1
shift
rotate=""
if [ $# -gt 0 ]; then
    [ "$1" = --rotate ] && [ $# -ge 2 ] || usage
    shift
    for name in "$@"; do known "$name" || usage; done
    rotate=" $* "
fi
mkdir -p "$dir"
chmod 0755 "$dir"  # the iui user must reach its files; each file guards itself
for name in $NAMES; do
    case "$rotate" in *" $name "*) generate "$name" ;; *) [ -s "$dir/$name" ] || generate "$name" ;; esac
    protect "$name"
done
