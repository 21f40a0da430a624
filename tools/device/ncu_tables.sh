# Sourced by the Nsight Compute scripts (profile.sh, profile_model.sh):
#   ncu_tables BASE   BASE.ncu-rep -> BASE.details.csv (every section) and BASE.source.csv
#                     (per-SASS-instruction warp-stall samples); the report is removed.
ncu_tables() {
  ncu --import "$1.ncu-rep" --page details --csv > "$1.details.csv" 2>/dev/null
  ncu --import "$1.ncu-rep" --page source --print-source sass --csv > "$1.source.csv" 2>/dev/null
  rm -f "$1.ncu-rep"
}
