#!/bin/sh
# Render the ACL template: render-acl.sh TEMPLATE OUTPUT
# Each @<NAME>_SHA256@ becomes the SHA-256 of the password of that user (ADMIN, WORKER, PRODUCER,
# VIEWER, GATEWAY): the content of the file $IUI_REDIS_<NAME>_PASSWORD_FILE (compose: the files of
# ops/redis/secrets.sh; a final LF or CRLF is dropped, as the iui settings do), else
# $IUI_REDIS_<NAME>_PASSWORD.  A missing or empty password stops with an error.  Only hashes are written.
set -eu
template=$1
output=$2
tmp="$output.tmp"
cr=$(printf '\r')
cp "$template" "$tmp"
for name in ADMIN WORKER PRODUCER VIEWER GATEWAY; do
    eval "file=\${IUI_REDIS_${name}_PASSWORD_FILE:-}"
    if [ -n "$file" ]; then
        password=$(cat "$file") || { rm -f "$tmp"; exit 1; }
        password=${password%"$cr"}  # a CRLF line end, as the iui settings read it
    else
        eval "password=\${IUI_REDIS_${name}_PASSWORD:-}"
    fi
    if [ -z "$password" ]; then
        echo "render-acl.sh: no password for ${name}: set IUI_REDIS_${name}_PASSWORD_FILE or IUI_REDIS_${name}_PASSWORD" >&2
        rm -f "$tmp"
        exit 1
    fi
    hash=$(printf '%s' "$password" | sha256sum | cut -d' ' -f1)
    sed -i "s/@${name}_SHA256@/${hash}/" "$tmp"
done
# redis-server's ACL file has no comments: keep only the user lines.
grep -v '^#' "$tmp" | grep -v '^$' > "$output"
rm -f "$tmp"
chmod 0644 "$output"
