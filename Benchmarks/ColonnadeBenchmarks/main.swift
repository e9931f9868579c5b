import Colonnade
print("colonnade-bench \(Colonnade.version)")
