#pragma once
// Standard output as a checked destination: data written there ("-" as an output path) and the
// results a command prints must not be lost silently when stdout is full, closed or broken.

#include <cstddef>
#include <span>
#include <string_view>

namespace gpukit::io {

/// Writes `bytes` to standard output (file descriptor 1), after flushing C's `stdout` buffer (and
/// so std::cout, which writes through it) so that text printed earlier stays in front. Throws
/// IoError "<stdout>: write failed: <reason>" (e.g. "No space left on device", "Bad file
/// descriptor" for a closed stdout).
void write_stdout(std::span<const std::byte> bytes);
void write_stdout(std::string_view text);

/// Flushes std::cout and C's `stdout`, and throws IoError "<stdout>: write failed: <reason>" when
/// that flush or any earlier write through them failed (their error flags are sticky). A program
/// calls it before reporting success, so that a result printed into a failing stdout is an error
/// rather than a silent loss.
void flush_stdout();

}  // namespace gpukit::io
