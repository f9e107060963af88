#pragma once
// The engine's choices a run's config names (--executor, --transport), apart from the
// engine itself so that the configs, which the library installs, need no more of it.
#include <string>

namespace triada {

enum class Executor { reference, fused };
// How the fused executor moves pivot planes between the bricks of a line (doc/design.md
// §8.5): broadcast sends them as messages on the line communicator; shared reads them
// through the line's MPI shared-memory window where the line lives on one node (elsewhere
// it broadcasts); automatic picks per stage (§8.5).
enum class PivotTransport { automatic, broadcast, shared };
Executor parse_executor(const std::string& word);  // "reference" | "fused"
const char* to_string(Executor e);
PivotTransport parse_transport(const std::string& word);  // "auto" | "broadcast" | "shared"
const char* to_string(PivotTransport t);

}  // namespace triada
