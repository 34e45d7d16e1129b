//! Natural-parameter continuation (placeholder filled below).
