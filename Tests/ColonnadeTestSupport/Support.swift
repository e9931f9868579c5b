import Colonnade
