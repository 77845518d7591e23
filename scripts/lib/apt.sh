# apt_install WHAT PACKAGE...: installs Debian's PACKAGEs for WHAT, through sudo when not root.
apt_install() {
    local what=$1
    shift
    local sudo=""
    if [[ $(id -u) -ne 0 ]]; then
        sudo="sudo"
    fi
    echo "installing $* (Debian packages) for $what" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@" >/dev/null
}
