#!/bin/sh
# The passwords of the Redis ACL users of the local stack (compose's one-shot `secrets` service).
#   secrets.sh DIR                    create DIR/<user> for each user whose file is missing or empty
#   secrets.sh DIR --rotate USER...   replace the named users' passwords (then restart Redis and its clients)
# Users: admin, worker, producer, viewer.  A password is 32 random bytes as 64 hex digits (URL-safe).
# Existing files are kept, so the passwords survive restarts; their owner and mode are set again on
# every run: `worker` root:10001 0440 (read by the iui image's group), the others root:root 0400
# (read by Redis, which starts as root).  Only the users' names are printed, never a password.
set -eu
umask 077
USERS="admin worker producer viewer"
IUI_GID=10001

usage() {
    echo "usage: secrets.sh DIR [--rotate USER...]  (users: $USERS)" >&2
    exit 2
}

known() {
    for user in $USERS; do [ "$user" = "$1" ] && return 0; done
    return 1
}

generate() {  # generate USER: a new password, written whole (a temporary file renamed over the old one)
    tmp="$dir/.$1.tmp"
    rm -f "$tmp"
    head -c 32 /dev/urandom | od -An -tx1 -v | tr -d ' \n' > "$tmp"
    if [ "$(wc -c < "$tmp" | tr -d ' ')" != 64 ]; then
        rm -f "$tmp"
        echo "secrets.sh: could not generate a password for $1" >&2
        exit 1
    fi
    mv -f "$tmp" "$dir/$1"
    echo "secrets.sh: generated the password of $1"
}

protect() {  # protect USER: owner and mode of its file
    if [ "$1" = worker ]; then
        chown "0:$IUI_GID" "$dir/$1" && chmod 0440 "$dir/$1"
    else
        chown 0:0 "$dir/$1" && chmod 0400 "$dir/$1"
    fi
}

[ $# -ge 1 ] || usage
dir=$1
shift
rotate=""
if [ $# -gt 0 ]; then
    [ "$1" = --rotate ] && [ $# -ge 2 ] || usage
    shift
    for user in "$@"; do known "$user" || usage; done
    rotate=" $* "
fi
mkdir -p "$dir"
chmod 0755 "$dir"  # the iui user must reach its file; each file guards itself
for user in $USERS; do
    case "$rotate" in *" $user "*) generate "$user" ;; *) [ -s "$dir/$user" ] || generate "$user" ;; esac
    protect "$user"
done
