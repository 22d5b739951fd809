"""Index build machinery: fingerprints, build reports, one build, many builds, builds on demand."""
