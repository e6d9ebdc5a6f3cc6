#!/bin/sh
# Render the ACL template: render-acl.sh TEMPLATE OUTPUT
# Each @<NAME>_SHA256@ becomes the SHA-256 of $IUI_REDIS_<NAME>_PASSWORD (ADMIN, WORKER,
# PRODUCER, VIEWER); an unset or empty password stops with an error.  Only hashes are written.
set -eu
template=$1
output=$2
tmp="$output.tmp"
cp "$template" "$tmp"
for name in ADMIN WORKER PRODUCER VIEWER; do
    eval "password=\${IUI_REDIS_${name}_PASSWORD:-}"
    if [ -z "$password" ]; then
        echo "render-acl.sh: IUI_REDIS_${name}_PASSWORD is not set" >&2
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
