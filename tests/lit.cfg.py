# -*- Python -*-
# lit configuration shared by the lit suites under tests/ (one per stage,
# the command line's, and the diagnostics registry's). Each suite's
# CMakeLists.txt writes a lit.site.cfg.py into its build directory that sets `config.hbgc` and the suite's roots and then
# loads this file; ctest runs `lit.py -sv <build>/tests/<suite>`.
#
# Without CMake:
#   python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv \
#       --param hbgc=build/bin/hbgc tests/sema

import os
import tempfile

import lit.formats

config.name = config.name or "hbg"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".hbg", ".test"]
config.excludes = ["tools", "Inputs", "models", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

tests_dir = os.path.dirname(os.path.abspath(__file__))
source_root = os.path.dirname(tests_dir)

hbgc = lit_config.params.get("hbgc", getattr(config, "hbgc", None))
if not hbgc:
    lit_config.fatal("no hbgc: run through ctest, or pass --param hbgc=PATH/TO/hbgc")
hbgc = os.path.abspath(hbgc)
if not os.access(hbgc, os.X_OK):
    lit_config.fatal("hbgc is not built: %s (build the `hbgc` target first)" % hbgc)

# Without a site config (lit run on the source tree), keep lit's Output/
# directories out of the sources.
if not getattr(config, "test_exec_root", None):
    config.test_exec_root = os.path.join(tempfile.gettempdir(), "hbg-lit-" + str(os.getuid()))

llvm_bin = "/usr/lib/llvm-19/bin"
config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])
# Diagnostics and dumps must not depend on the caller's locale or colours.
config.environment["LC_ALL"] = "C"

python = "/usr/bin/python3"
tools = os.path.join(tests_dir, "tools")

# `%{file}`: the test file's name without its directory, so that messages
# (`fail_x.hbg:3:5: error: ...`) do not depend on where the tree lives. It
# expands to lit's own `%basename_t`, substituted after this list.
config.substitutions.append(("%{file}", "%basename_t"))
config.substitutions.append(("%{root}", source_root))
config.substitutions.append(("%{examples}", os.path.join(source_root, "examples")))
# `%{models}`: the small models the tests of several stages share.
config.substitutions.append(("%{models}", os.path.join(tests_dir, "models")))
# `%status CMD...` prints `$ CMD...`, runs it, then prints its exit status:
# expected output then pins the whole output and the status.
config.substitutions.append(("%status", "%s %s" % (python, os.path.join(tools, "status.py"))))
config.substitutions.append(("%python", python))
config.substitutions.append(("%hbgc", hbgc))
